package io.breakwater.internal.boot;

import java.nio.charset.StandardCharsets;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.MethodNotAllowedException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * A write to the {@code breakwater} Actuator endpoint while its write operation is off (the endpoint's default
 * access is read-only) is answered 405 with what to change, rather than a bare 405.
 */
final class EndpointWriteAccessFilter implements WebFilter {

  static final String MESSAGE = "The breakwater endpoint is read-only, so forcing a breaker open or closed is off. To "
      + "turn it on, set management.endpoint.breakwater.access=unrestricted (and keep the endpoint behind your "
      + "Actuator security), then POST {\"state\": \"open\"} or {\"state\": \"closed\"} here.\n";

  private final String prefix;

  /** Watches the endpoint under {@code basePath} (Actuator's {@code management.endpoints.web.base-path}). */
  EndpointWriteAccessFilter(String basePath) {
    this.prefix = (basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath) + "/breakwater";
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    String path = exchange.getRequest().getPath().pathWithinApplication().value();
    if (HttpMethod.GET.equals(exchange.getRequest().getMethod())
        || !(path.equals(prefix) || path.startsWith(prefix + "/"))) {
      return chain.filter(exchange);
    }
    return chain.filter(exchange).onErrorResume(MethodNotAllowedException.class, e -> {
      ServerHttpResponse response = exchange.getResponse();
      if (response.isCommitted()) {
        return Mono.error(e);
      }
      response.setStatusCode(HttpStatus.METHOD_NOT_ALLOWED);
      response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
      response.getHeaders().set(HttpHeaders.ALLOW, "GET");
      return response.writeWith(Mono.fromSupplier(
          () -> response.bufferFactory().wrap(MESSAGE.getBytes(StandardCharsets.UTF_8))));
    });
  }
}
