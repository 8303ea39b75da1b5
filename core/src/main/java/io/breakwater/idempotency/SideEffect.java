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
 *   <li>{@link #NON_IDEMPOTENT_WRITE}: doing it twice does it twice (a payment, an e-mail, a refund). It may be
 *       retried only inside {@code idempotentBy}, which makes it happen at most once per key; a retry outside one is
 *       refused when it is subscribed.</li>
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
  NON_IDEMPOTENT_WRITE;

  /** The side effect declared for the call this Context belongs to, if any. */
  public static Optional<SideEffect> from(ContextView context) {
    return Optional.ofNullable(context.getOrDefault(ContextKeys.SIDE_EFFECT, null));
  }
}
