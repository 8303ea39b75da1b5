package io.breakwater.breaker;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * One change of a circuit breaker's state, as seen on {@link CircuitBreaker#transitions()} and exchanged through a
 * {@link BreakerStateStore}.
 *
 * <pre>{@code
 * breaker.transitions().subscribe(t -> log.warn("{} {} -> {}", t.breaker(), t.from(), t.to()));
 * }</pre>
 *
 * @param breaker the breaker's name
 * @param from the state it left
 * @param to the state it entered
 * @param at when, on the breaker's scheduler clock, as an offset from {@link java.time.Instant#EPOCH} (a monotonic
 *     reading, not a wall-clock time); a transition applied from another instance is dated when it arrived, by the
 *     receiving breaker's clock, since monotonic clocks of two hosts share no origin
 * @param openDuration for a transition to {@code OPEN}, how long it stays open before a probe; otherwise zero
 * @param origin the instance that made the transition (a random id per breaker instance); transitions applied from
 *     another instance keep that instance's origin
 */
public record StateTransition(String breaker, CircuitBreaker.State from, CircuitBreaker.State to, Instant at,
    Duration openDuration, String origin) {

  public StateTransition {
    Objects.requireNonNull(breaker, "breaker");
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(openDuration, "openDuration");
    Objects.requireNonNull(origin, "origin");
  }
}
