package io.breakwater.http;

import io.breakwater.idempotency.IdempotencyContext;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.internal.ContextKeys;
import java.util.Objects;
import java.util.Optional;
import reactor.netty.http.client.HttpClient;
import reactor.util.context.ContextView;

/**
 * Sends the idempotency key in force to the dependency, so that it can dedupe too: Breakwater's claim is the first
 * line of defence, the dependency's own check on the key the last (a Redis failover can lose a claim). Inside
 * {@code idempotentBy(key, ..)} (or a {@code Tool} with an idempotency key) the key is in the Reactor Context of the
 * call; outside, requests are sent without the header.
 *
 * <pre>{@code
 * HttpClient payments = IdempotencyKeyHeader.standard().sendOn(
 *     DeadlineHeader.standard().sendOn(HttpClient.create().baseUrl("https://payments.example")));
 *
 * Mono<String> receipt = HttpResponses.bodyAsString(payments.post().uri("/charges").send(body))
 *     .transformDeferred(retryWithBudget(retry))
 *     .transformDeferred(idempotentBy(IdempotencyKey.explicit("payments.charge", orderId, order), idempotency,
 *         String.class))                        // each attempt carries Idempotency-Key: 64 hex digits
 *     .transformDeferred(sideEffect(SideEffect.DEDUPLICATED_WRITE));   // the API dedupes on the key
 * }</pre>
 *
 * <p>The value is the keyed form of the key, {@link IdempotencyPolicy#sentKey}: the HMAC-SHA-256 of the key under the
 * policy's {@code keySecret}, 64 lower-case hex digits, the same on every attempt and on every instance that shares the
 * secret. The plain key ({@link IdempotencyKey#value()}: the namespace, the tool, and the client key or an unkeyed hash
 * of the arguments) never leaves the process, so a dependency can neither read the tenant nor guess a low-entropy
 * argument (a PIN) from what it receives. Every host the client calls gets the header: decorate only the clients of
 * dependencies that dedupe on it. Immutable and thread-safe.
 */
public final class IdempotencyKeyHeader {

  /** The header's default name, the one Stripe and the IETF draft {@code Idempotency-Key} header use. */
  public static final String DEFAULT_NAME = "Idempotency-Key";

  private static final String TOKEN_SYMBOLS = "!#$%&'*+-.^_`|~";

  private final String name;

  private IdempotencyKeyHeader(String name) {
    this.name = name;
  }

  /** The {@value #DEFAULT_NAME} header. */
  public static IdempotencyKeyHeader standard() {
    return new IdempotencyKeyHeader(DEFAULT_NAME);
  }

  /** A header of another name, e.g. {@code X-Idempotency-Key} for an API that expects that one. */
  public static IdempotencyKeyHeader named(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isEmpty() || !name.chars().allMatch(IdempotencyKeyHeader::isTokenChar)) {
      throw new IllegalArgumentException("Idempotency key header name '" + name + "' is not an HTTP header name: use "
          + "letters, digits and - (e.g. X-Idempotency-Key)");
    }
    return new IdempotencyKeyHeader(name);
  }

  public String name() {
    return name;
  }

  /**
   * The header's value for the idempotency key in force in {@code context}, if there is one: its keyed form
   * ({@link IdempotencyPolicy#sentKey}). Send it from a client of your own, then call
   * {@link IdempotencyContext#markKeySent()}.
   */
  public Optional<String> value(ContextView context) {
    Object sent = context.getOrDefault(ContextKeys.IDEMPOTENCY_SENT_KEY, null);
    return sent instanceof String value ? Optional.of(value) : Optional.empty();
  }

  /**
   * {@code client}, sending the idempotency key in force (read from each request's Context) with every request.
   * Requests made outside {@code idempotentBy} are sent without the header.
   */
  public HttpClient sendOn(HttpClient client) {
    return client.doOnRequest((request, connection) -> {
      ContextView context = request.currentContextView();
      value(context).ifPresent(value -> {
        request.header(name, value);
        IdempotencyContext.current(context).ifPresent(IdempotencyContext::markKeySent);
      });
    });
  }

  private static boolean isTokenChar(int c) {
    return c < 0x7f && (Character.isLetterOrDigit(c) || TOKEN_SYMBOLS.indexOf(c) >= 0);
  }
}
