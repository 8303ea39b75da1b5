package io.breakwater.idempotency;

import static io.breakwater.Breakwater.idempotentBy;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Exactly once under concurrency: duplicates race on real threads, and each key's call runs once. */
class IdempotentByConcurrencyTest {

  private static final int KEYS = 1_000;
  private static final int DUPLICATES = 64;

  @Test
  void thousandKeysTimesSixtyFourDuplicatesRunExactlyThousandCalls() {
    // Waiting duplicates must be woken by the store: polling once a minute would run past the 60 s limit below.
    IdempotencyPolicy policy = IdempotencyPolicy.builder(IdempotencyStore.inMemory())
        .pollInterval(Duration.ofMinutes(1))
        .build();
    AtomicIntegerArray runsPerKey = new AtomicIntegerArray(KEYS);
    AtomicInteger executions = new AtomicInteger();
    List<Integer> callers = new ArrayList<>(KEYS * DUPLICATES);
    for (int k = 0; k < KEYS; k++) {
      for (int d = 0; d < DUPLICATES; d++) {
        callers.add(k);
      }
    }
    Collections.shuffle(callers, new Random(42));

    List<String> wrong = Flux.fromIterable(callers)
        .flatMap(k -> {
          IdempotencyKey key = IdempotencyKey.of("orders.place", Map.of("order", k));
          return Mono.fromCallable(() -> {
                executions.incrementAndGet();
                return k + ":" + runsPerKey.incrementAndGet(k);
              })
              .subscribeOn(Schedulers.parallel())
              .transformDeferred(idempotentBy(key, policy, String.class))
              .filter(result -> !result.equals(k + ":1"))
              .map(result -> "caller of key " + k + " got " + result);
        }, 512)
        .collectList()
        .block(Duration.ofSeconds(60));

    assertThat(wrong).as("callers that got another key's result or a second run's").isEmpty();
    assertThat(executions).hasValue(KEYS);
  }
}
