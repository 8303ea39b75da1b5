package io.breakwater.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.agent.TaskState;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Tools of one task run in parallel: steps, tokens and failure counts stay exact under races. */
class TaskStateRaceTest {

  static final int THREADS = 8;
  static final int PER_THREAD = 500;

  interface Action {
    void run(int thread, int i);
  }

  static void race(Action action) throws InterruptedException {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    CountDownLatch start = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(THREADS);
    try {
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        pool.execute(() -> {
          try {
            start.await();
            for (int i = 0; i < PER_THREAD; i++) {
              action.run(thread, i);
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            done.countDown();
          }
        });
      }
      start.countDown();
      assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void stepsNeverExceedTheBudgetUnderRaces() throws InterruptedException {
    for (int round = 0; round < 20; round++) {
      TaskState outer = new TaskState(TaskBudget.builder(Duration.ofMinutes(1)).maxSteps(1_500).build(), null);
      TaskState inner = new TaskState(TaskBudget.builder(Duration.ofMinutes(1)).maxSteps(1_000).build(), outer);
      AtomicInteger taken = new AtomicInteger();
      race((thread, i) -> {
        if ((thread % 2 == 0 ? inner : outer).takeStep() == null) {
          taken.incrementAndGet();
        }
      });
      assertThat(taken.get()).as("round %d", round).isEqualTo(1_500);
      assertThat(outer.takeStep()).isNotNull();
    }
  }

  @Test
  void failureCountsAreExactAndTheToolIsWrittenOffOnce() throws InterruptedException {
    for (int round = 0; round < 20; round++) {
      TaskState state = new TaskState(TaskBudget.builder(Duration.ofMinutes(1)).build(), null);
      AtomicInteger reachedThreshold = new AtomicInteger();
      race((thread, i) -> {
        FailureKind kind = i % 2 == 0 ? FailureKind.TIMEOUT : FailureKind.SERVER_ERROR;
        if (state.recordFailure("t" + (thread % 2), kind, "r", Map.of(FailureKind.TIMEOUT, 100), null) == 100
            && kind == FailureKind.TIMEOUT) {
          reachedThreshold.incrementAndGet();
        }
      });
      assertThat(state.failures("t0", FailureKind.TIMEOUT)).isEqualTo(THREADS / 2 * PER_THREAD / 2);
      assertThat(state.failures("t1", FailureKind.SERVER_ERROR)).isEqualTo(THREADS / 2 * PER_THREAD / 2);
      assertThat(reachedThreshold).hasValue(2);
      assertThat(state.unavailable("t0")).isNotNull().satisfies(e -> {
        assertThat(e.causeKind()).isEqualTo(FailureKind.TIMEOUT);
        assertThat(e.failures()).isEqualTo(1_000);
      });
      assertThat(state.memoryLines()).hasSize(2);
    }
  }

  @Test
  void racingFirstRefusalsShareOneTableAndAreAllCounted() throws InterruptedException {
    for (int round = 0; round < 20; round++) {
      TaskState state = new TaskState(TaskBudget.builder(Duration.ofMinutes(1)).build(), null);
      Map<FailureKind, Integer> after = Map.of(FailureKind.INVALID_ARGUMENT, 1);
      race((thread, i) -> state.recordFailure("lookup", FailureKind.INVALID_ARGUMENT, "id must be numeric", after,
          "{\"id\":\"x" + (i % 2) + "\"}"));
      for (int variant = 0; variant < 2; variant++) {
        String key = "{\"id\":\"x" + variant + "\"}";
        assertThat(state.refusal("lookup", () -> key, after)).as("round %d, variant %d", round, variant)
            .isNotNull()
            .satisfies(e -> assertThat(e.failures()).isEqualTo(THREADS * PER_THREAD / 2));
      }
      assertThat(state.refusal("lookup", () -> "{\"id\":\"42\"}", after)).isNull();
      assertThat(state.unavailable("lookup")).isNull();
    }
  }

  @Test
  void tokensAddUpExactly() throws InterruptedException {
    TaskState state = new TaskState(TaskBudget.builder(Duration.ofMinutes(1)).tokens(10_000).build(), null);
    AtomicInteger refused = new AtomicInteger();
    race((thread, i) -> {
      if (state.spendTokens(3) != null) {
        refused.incrementAndGet();
      }
    });
    // 4 000 spends of 3 tokens: the first 3 333 fit in 10 000
    assertThat(refused).hasValue(THREADS * PER_THREAD - 3_333);
  }
}
