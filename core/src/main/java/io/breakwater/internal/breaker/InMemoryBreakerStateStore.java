package io.breakwater.internal.breaker;

import io.breakwater.breaker.BreakerStateStore;
import io.breakwater.breaker.StateTransition;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * {@link BreakerStateStore#inMemory()}: a multicast sink per breaker name for transitions and a counter per name for
 * probe claims. Lock-free; claims do not expire, because in one process every probe releases its claim.
 */
public final class InMemoryBreakerStateStore implements BreakerStateStore {

  /** Concurrent publishers of one name retry until the sink is free; the critical section is one hand-off. */
  private static final Sinks.EmitFailureHandler RETRY_NON_SERIALIZED =
      (signal, result) -> result == Sinks.EmitResult.FAIL_NON_SERIALIZED;

  private final ConcurrentMap<String, Sinks.Many<StateTransition>> topics = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, AtomicInteger> probes = new ConcurrentHashMap<>();

  private Sinks.Many<StateTransition> topic(String breaker) {
    Sinks.Many<StateTransition> topic = topics.get(breaker);
    if (topic == null) {
      Sinks.Many<StateTransition> fresh = Sinks.many().multicast().directBestEffort();
      topic = topics.putIfAbsent(breaker, fresh);
      if (topic == null) {
        topic = fresh;
      }
    }
    return topic;
  }

  private AtomicInteger claims(String breaker) {
    AtomicInteger claims = probes.get(breaker);
    if (claims == null) {
      AtomicInteger fresh = new AtomicInteger();
      claims = probes.putIfAbsent(breaker, fresh);
      if (claims == null) {
        claims = fresh;
      }
    }
    return claims;
  }

  @Override
  public Mono<Void> publish(StateTransition transition) {
    return Mono.fromRunnable(() -> topic(transition.breaker()).emitNext(transition, RETRY_NON_SERIALIZED));
  }

  @Override
  public Flux<StateTransition> transitions(String breaker) {
    return Flux.defer(() -> topic(breaker).asFlux());
  }

  @Override
  public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {
    return Mono.fromSupplier(() -> {
      AtomicInteger claims = claims(breaker);
      for (;;) {
        int held = claims.get();
        if (held >= permits) {
          return false;
        }
        if (claims.compareAndSet(held, held + 1)) {
          return true;
        }
      }
    });
  }

  @Override
  public Mono<Void> releaseProbe(String breaker) {
    return Mono.fromRunnable(() -> claims(breaker).updateAndGet(held -> Math.max(0, held - 1)));
  }
}
