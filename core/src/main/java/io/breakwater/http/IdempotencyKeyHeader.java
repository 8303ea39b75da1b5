package io.breakwater.http;

import io.breakwater.idempotency.IdempotencyContext;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.internal.ContextKeys;
import java.nio.charset.StandardCharsets;
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
 *     .transformDeferred(retryWithBudget(policy))
 *     .transformDeferred(idempotentBy(IdempotencyKey.explicit("payments.charge", orderId, order), store,
 *         String.class))                        // each attempt carries Idempotency-Key: default:payments.charge:key:…
 *     .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE));
 * }</pre>
 *
 * <p>The value is the key's {@link IdempotencyKey#value()}, the same on every attempt and every instance. A key
 * holding characters that a header cannot carry (anything outside visible ASCII, and {@code %}) is sent with those
 * bytes of its UTF-8 form percent-encoded, so a caller-given key can never break or forge a header. Immutable and
 * thread-safe.
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

  /** The header's value for the idempotency key in force in {@code context}, if there is one. */
  public Optional<String> value(ContextView context) {
    Object key = context.getOrDefault(ContextKeys.IDEMPOTENCY_KEY, null);
    return key instanceof IdempotencyKey k ? Optional.of(encode(k.value())) : Optional.empty();
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

  /** {@code key} with every byte outside visible ASCII, and {@code %}, percent-encoded. */
  static String encode(String key) {
    boolean plain = true;
    for (int i = 0; i < key.length() && plain; i++) {
      plain = isVisibleAscii(key.charAt(i)) && key.charAt(i) != '%';
    }
    if (plain) {
      return key;
    }
    StringBuilder out = new StringBuilder(key.length() + 16);
    for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (isVisibleAscii(c) && c != '%') {
        out.append((char) c);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return out.toString();
  }

  private static boolean isVisibleAscii(int c) {
    return c > 0x20 && c < 0x7f;
  }

  private static boolean isTokenChar(int c) {
    return c < 0x7f && (Character.isLetterOrDigit(c) || TOKEN_SYMBOLS.indexOf(c) >= 0);
  }
}
