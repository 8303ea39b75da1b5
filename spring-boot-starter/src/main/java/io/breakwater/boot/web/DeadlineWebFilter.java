package io.breakwater.boot.web;

import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.boot.DeadlineDefaults;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.internal.Saturating;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Runs each WebFlux request under the deadline its header carries ({@code Breakwater-Timeout: 2500m}, gRPC's
 * timeout format, see {@link DeadlineHeader}): the deadline is in the Reactor Context of the handler and of every
 * call it makes (a {@code WebClient} with Breakwater's filter sends what is left of it downstream), and it bounds the
 * handler.
 *
 * <ul>
 *   <li>A deadline already expired on arrival ({@code 0n}, or too short to start) is answered {@code 504} without
 *       calling the handler.</li>
 *   <li>A malformed header, or more than one, is answered {@code 400} with a plain-text reason that never repeats the
 *       value received.</li>
 *   <li>A deadline longer than {@code max} is cut to it, so a caller cannot hold the server's resources for
 *       hours.</li>
 *   <li>A handler still running at the deadline is cancelled and answered {@code 504} if it has not sent its headers
 *       yet.</li>
 *   <li>A request without the header runs under {@code defaultBudget} ({@link #DEFAULT_BUDGET}, 30 s, when none is
 *       given), also cut to {@code max}: a client cannot run a request, and its downstream calls, without a deadline
 *       by leaving the header out.</li>
 * </ul>
 *
 * <pre>{@code
 * new DeadlineWebFilter("Breakwater-Timeout", Duration.ofMinutes(5), null, deadlines);
 * }</pre>
 *
 * <p>The Spring Boot starter registers one, configured by {@code breakwater.deadline.*}. Ordered just after the
 * highest precedence, so that it bounds the other filters too. Thread-safe.
 */
public final class DeadlineWebFilter implements WebFilter, Ordered {

  /** The filter's order: early, so that the deadline bounds the other filters as well. */
  public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 100;

  /** The deadline of a request without the header when no {@code defaultBudget} is given: 30 seconds. */
  public static final Duration DEFAULT_BUDGET = Duration.ofSeconds(30);

  private final String header;
  private final long maxNanos;
  private final Duration defaultBudget;
  private final DeadlineDefaults deadlines;
  private final String name;

  /**
   * @param header the header's name
   * @param max the longest deadline honoured
   * @param defaultBudget the deadline of a request without the header, or {@code null} for {@link #DEFAULT_BUDGET}
   * @param deadlines the ratios and scheduler of the deadlines made
   */
  public DeadlineWebFilter(String header, Duration max, @Nullable Duration defaultBudget, DeadlineDefaults deadlines) {
    this.header = DeadlineHeader.named(header).name();
    if (max.isNegative() || max.isZero()) {
      throw new IllegalArgumentException("max is " + max + ": give the longest deadline a caller may ask for, e.g. 5m");
    }
    if (defaultBudget != null && (defaultBudget.isNegative() || defaultBudget.isZero())) {
      throw new IllegalArgumentException("defaultBudget is " + defaultBudget
          + ": give a positive duration, e.g. 30s, or none for " + DEFAULT_BUDGET.getSeconds() + " s");
    }
    this.maxNanos = Saturating.nanos(max);   // past 292 years (a "no maximum" setting): the longest a header can say
    Duration noHeader = defaultBudget != null ? defaultBudget : DEFAULT_BUDGET;
    this.defaultBudget = Saturating.nanos(noHeader) > maxNanos ? Duration.ofNanos(maxNanos) : noHeader;
    this.deadlines = Objects.requireNonNull(deadlines, "deadlines");
    this.name = "inbound " + header;
  }

  @Override
  public int getOrder() {
    return ORDER;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    List<String> values = exchange.getRequest().getHeaders().get(header);
    Duration budget;
    if (values == null || values.isEmpty()) {
      budget = defaultBudget;
    } else if (values.size() > 1) {
      return answer(exchange.getResponse(), HttpStatus.BAD_REQUEST, "More than one " + header
          + " header: send one, e.g. " + header + ": 2500m");
    } else {
      long nanos;
      try {
        nanos = DeadlineHeader.parse(values.get(0));
      } catch (IllegalArgumentException malformed) {
        return answer(exchange.getResponse(), HttpStatus.BAD_REQUEST, "Malformed " + header
            + " header: expected 1 to 8 digits and a unit (H, M, S, m, u or n), e.g. 2500m");
      }
      if (nanos == 0) {
        return answer(exchange.getResponse(), HttpStatus.GATEWAY_TIMEOUT, "The " + header
            + " deadline had already expired when the request arrived");
      }
      budget = Duration.ofNanos(Math.min(nanos, maxNanos));
    }
    return Mono.defer(() -> chain.filter(exchange))
        .transform(withDeadline(deadlines.spec(name, budget)))
        .onErrorResume(DeadlineExceededException.class, e -> exchange.getResponse().isCommitted()
            ? Mono.error(e)
            : answer(exchange.getResponse(), HttpStatus.GATEWAY_TIMEOUT, String.valueOf(e.getMessage())));
  }

  private static Mono<Void> answer(ServerHttpResponse response, HttpStatus status, String text) {
    response.setStatusCode(status);
    response.getHeaders().setContentType(new MediaType(MediaType.TEXT_PLAIN, StandardCharsets.UTF_8));
    return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory()
        .wrap(text.getBytes(StandardCharsets.UTF_8))));
  }

  @Override
  public String toString() {
    return "DeadlineWebFilter{" + header + ", max=" + Duration.ofNanos(maxNanos) + ", default=" + defaultBudget + "}";
  }
}
