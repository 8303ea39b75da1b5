package io.breakwater.idempotency;

import io.breakwater.internal.ContextKeys;
import java.util.Optional;
import reactor.util.context.ContextView;

/**
 * What a call does to the world, which decides whether it may be retried.
 *
 * <ul>
 *   <li>{@link #READ_ONLY}: changes nothing; retry freely.</li>
 *   <li>{@link #IDEMPOTENT_WRITE}: changes something, but doing it twice equals doing it once (a PUT, a write keyed
 *       by the dependency itself); retry freely.</li>
 *   <li>{@link #NON_IDEMPOTENT_WRITE}: doing it twice does it twice (a payment, an e-mail, a refund). It is sent at
 *       most once per key: inside {@code idempotentBy}, a retry re-sends it only after a failure that proves the
 *       request was not processed (a 429, a connection refused before anything was written, a refusal of
 *       Breakwater's own before sending); a timeout, a 5xx or a dropped connection is never followed by another
 *       send, hedging it is refused, and a cancel or such a failure after it was sent records the key as of unknown
 *       outcome ({@link WriteOutcomeUnknownException} for every duplicate). Outside {@code idempotentBy} a retry of
 *       it is refused when it is subscribed. A call inside {@code idempotentBy} that declares nothing is taken as
 *       this.</li>
 *   <li>{@link #DEDUPLICATED_WRITE}: a write that the dependency itself deduplicates on the idempotency key sent
 *       with every attempt (Stripe's and many payment APIs' {@code Idempotency-Key}). Inside {@code idempotentBy} it
 *       is retried and hedged like an idempotent write, as long as the key went out with each failed attempt
 *       ({@link io.breakwater.http.IdempotencyKeyHeader}, {@code BreakwaterExchangeFilter}, or
 *       {@link IdempotencyContext#markKeySent()} for a client of your own); an attempt that did not send it falls
 *       back to the rule of {@link #NON_IDEMPOTENT_WRITE}. Outside {@code idempotentBy} it is refused like one.</li>
 * </ul>
 *
 * Declare it with {@link io.breakwater.Breakwater#sideEffect(SideEffect)} outside the retry:
 *
 * <pre>{@code
 * payments.charge(order)
 *     .transformDeferred(retryWithBudget(fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
 *     .transformDeferred(idempotentBy(IdempotencyKey.of("payments.charge", order), store, Receipt.class))
 *     .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE));
 * }</pre>
 */
public enum SideEffect {
  READ_ONLY,
  IDEMPOTENT_WRITE,
  NON_IDEMPOTENT_WRITE,
  DEDUPLICATED_WRITE;

  /** The side effect declared for the call this Context belongs to, if any. */
  public static Optional<SideEffect> from(ContextView context) {
    return Optional.ofNullable(context.getOrDefault(ContextKeys.SIDE_EFFECT, null));
  }
}
