package io.breakwater.spring.webflux;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.http.IdempotencyKeyHeader;
import io.breakwater.idempotency.IdempotencyContext;
import io.breakwater.internal.http.ErrorExcerpt;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Breakwater for Spring's {@code WebClient}, as one {@link ExchangeFilterFunction}. Each request (so each attempt of
 * a retry) is sent with:
 *
 * <ul>
 *   <li>the time left before the deadline in force ({@code Breakwater-Timeout}, see {@link DeadlineHeader}), read
 *       from the Reactor Context when the request goes out, so a retry tells the server its own, shorter budget and
 *       an attempt inside {@code perCallTimeout()} tells the attempt's budget;</li>
 *   <li>the idempotency key in force ({@code Idempotency-Key}, see {@link IdempotencyKeyHeader}) inside
 *       {@code idempotentBy}, so that the dependency can dedupe too: its keyed form only (an HMAC-SHA-256 under the
 *       idempotency policy's secret, {@code IdempotencyPolicy.sentKey}), never the plain key with its tenant, tool
 *       and arguments' hash; to every host by default, or only to the hosts given to
 *       {@link Builder#idempotencyKeyHosts} (send it only to the dependencies that dedupe on it).</li>
 * </ul>
 *
 * <p>A header the request already has is left as it is. Requests outside a deadline or {@code idempotentBy} go
 * without those headers.
 *
 * <p>An answer with status 400 or above fails with an {@link HttpStatusException} that carries the status and every
 * response header ({@code Retry-After}, {@code retry-after-ms}, {@code x-should-retry}, the rate-limit headers), so
 * {@code retryWithBudget} classifies it and honours its wait, and the breaker never counts a 4xx. Its message quotes
 * the start of the body: at most {@value #MAX_EXCERPT_BYTES} bytes are read (a longer body is cancelled, which closes
 * the connection), sensitive fields are masked and control characters escaped, the same as
 * {@link io.breakwater.http.HttpResponses} does for Reactor Netty. Since the filter fails the exchange itself, both
 * {@code retrieve()} and {@code exchangeToMono(..)} see the {@code HttpStatusException}, never a
 * {@code WebClientResponseException}.
 *
 * <pre>{@code
 * WebClient http = WebClient.builder()
 *     .baseUrl("https://api.example")
 *     .filter(BreakwaterExchangeFilter.create())
 *     .build();
 *
 * Mono<String> flights = http.get().uri("/flights").retrieve().bodyToMono(String.class)
 *     .transformDeferred(perCallTimeout())
 *     .transformDeferred(retryWithBudget(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
 *     .transformDeferred(withDeadline(Duration.ofSeconds(10)));
 * }</pre>
 *
 * <p>Immutable and thread-safe: build one and share it, as the {@code WebClient}.
 */
public final class BreakwaterExchangeFilter implements ExchangeFilterFunction {

  /** The most bytes of an error body that are read for the exception's message: 4 KiB. */
  public static final int MAX_EXCERPT_BYTES = ErrorExcerpt.MAX_BYTES;

  private final DeadlineHeader deadlineHeader;
  private final IdempotencyKeyHeader idempotencyKeyHeader;
  /** The hosts (lower case) the idempotency key is sent to; {@code null}: every host. */
  private final @Nullable Set<String> idempotencyKeyHosts;
  private final ErrorExcerpt excerpt = ErrorExcerpt.standard();

  private BreakwaterExchangeFilter(Builder builder) {
    this.deadlineHeader = builder.deadlineHeader;
    this.idempotencyKeyHeader = builder.idempotencyKeyHeader;
    this.idempotencyKeyHosts = builder.idempotencyKeyHosts;
  }

  /** The filter with {@link DeadlineHeader#standard()} and {@link IdempotencyKeyHeader#standard()}. */
  public static BreakwaterExchangeFilter create() {
    return builder().build();
  }

  /** A builder, to give the headers other names. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
    return Mono.deferContextual(context -> next.exchange(withHeaders(request, context)))
        .flatMap(response -> response.statusCode().isError() ? statusError(response) : Mono.just(response));
  }

  private ClientRequest withHeaders(ClientRequest request, ContextView context) {
    Optional<String> timeLeft = request.headers().containsHeader(deadlineHeader.name()) ? Optional.empty()
        : Deadline.from(context).map(deadline -> DeadlineHeader.format(deadline.remaining()));
    boolean keyGiven = request.headers().containsHeader(idempotencyKeyHeader.name());
    Optional<String> key = keyGiven || !sendsKeyTo(request.url().getHost()) ? Optional.empty()
        : idempotencyKeyHeader.value(context);
    if (keyGiven || key.isPresent()) {
      IdempotencyContext.current(context).ifPresent(IdempotencyContext::markKeySent);
    }
    if (timeLeft.isEmpty() && key.isEmpty()) {
      return request;
    }
    return ClientRequest.from(request)
        .headers(headers -> {
          timeLeft.ifPresent(value -> headers.set(deadlineHeader.name(), value));
          key.ifPresent(value -> headers.set(idempotencyKeyHeader.name(), value));
        })
        .build();
  }

  private boolean sendsKeyTo(@Nullable String host) {
    Set<String> hosts = idempotencyKeyHosts;
    return hosts == null || host != null && hosts.contains(host.toLowerCase(Locale.ROOT));
  }

  /**
   * Reads at most {@value #MAX_EXCERPT_BYTES} bytes of the body (cancelling the rest closes the connection instead of
   * draining it) and fails with the status; a body that cannot be read only shortens the excerpt.
   */
  private Mono<ClientResponse> statusError(ClientResponse response) {
    int status = response.statusCode().value();
    Map<String, List<String>> headers = new LinkedHashMap<>();
    response.headers().asHttpHeaders().forEach(headers::put);
    Charset charset = response.headers().contentType().map(MediaType::getCharset).orElse(StandardCharsets.UTF_8);
    return DataBufferUtils.join(DataBufferUtils.takeUntilByteCount(
            response.body(BodyExtractors.toDataBuffers()), MAX_EXCERPT_BYTES))
        .map(BreakwaterExchangeFilter::bytes)
        .onErrorResume(unreadable -> Mono.empty())
        .defaultIfEmpty(new byte[0])
        .flatMap(bytes -> Mono.error(excerpt.failure(status, headers, bytes, charset)));
  }

  private static byte[] bytes(DataBuffer buffer) {
    try {
      byte[] bytes = new byte[buffer.readableByteCount()];
      buffer.read(bytes);
      return bytes;
    } finally {
      DataBufferUtils.release(buffer);
    }
  }

  /** Builds a {@link BreakwaterExchangeFilter}; every setting has a default. */
  public static final class Builder {
    private DeadlineHeader deadlineHeader = DeadlineHeader.standard();
    private IdempotencyKeyHeader idempotencyKeyHeader = IdempotencyKeyHeader.standard();
    private @Nullable Set<String> idempotencyKeyHosts;

    private Builder() {}

    /**
     * Sends the idempotency key only to requests for these hosts (exact host names, compared without case, e.g.
     * {@code api.stripe.com}; no scheme, port, path or wildcard); none: never. Default: every host. The Spring Boot
     * starter's filter sends it to the hosts of {@code breakwater.idempotency.send-key-to-hosts}, none by default.
     *
     * @throws IllegalArgumentException for an entry that is not a host name, saying what to give instead
     */
    public Builder idempotencyKeyHosts(Collection<String> hosts) {
      Set<String> lower = new HashSet<>();
      for (String host : hosts) {
        lower.add(checkedHost(Objects.requireNonNull(host, "host")).toLowerCase(Locale.ROOT));
      }
      this.idempotencyKeyHosts = Set.copyOf(lower);
      return this;
    }

    /** {@code host} if it is a host name, an IPv4 address or a bracketed IPv6 address, as a request URL has it. */
    private static String checkedHost(String host) {
      boolean name = !host.isEmpty() && Character.isLetterOrDigit(host.charAt(0))
          && host.chars().allMatch(c -> c < 0x80 && (Character.isLetterOrDigit(c) || c == '.' || c == '-' || c == '_'));
      boolean ipv6 = host.length() > 2 && host.startsWith("[") && host.endsWith("]")
          && host.substring(1, host.length() - 1).chars().allMatch(c -> c < 0x80
              && (Character.digit(c, 16) >= 0 || c == ':' || c == '.'));
      if (!name && !ipv6) {
        throw new IllegalArgumentException("idempotency key host '" + host + "' is not a host name: give the host "
            + "only, as in the request's URL (e.g. api.stripe.com, 10.0.0.7 or [::1]), without scheme, port, path or "
            + "wildcard");
      }
      return host;
    }

    /** The header that carries the time left; default {@link DeadlineHeader#standard()}. */
    public Builder deadlineHeader(DeadlineHeader header) {
      this.deadlineHeader = Objects.requireNonNull(header, "deadlineHeader");
      return this;
    }

    /** The header that carries the idempotency key; default {@link IdempotencyKeyHeader#standard()}. */
    public Builder idempotencyKeyHeader(IdempotencyKeyHeader header) {
      this.idempotencyKeyHeader = Objects.requireNonNull(header, "idempotencyKeyHeader");
      return this;
    }

    public BreakwaterExchangeFilter build() {
      return new BreakwaterExchangeFilter(this);
    }
  }
}
