package io.breakwater.limit;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;
import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.agent.TaskBudget;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * One agent task cannot fill a limit's queue and lock the other tasks out: past its share ({@code maxQueuePerTask},
 * half of {@code maxQueue} by default) a task's calls are refused with {@code QUEUE_FULL}, and another task's call
 * still queues and is served.
 */
class TaskQueueShareTest {

  final VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
  final TaskBudget budget = TaskBudget.builder(Duration.ofHours(1)).build();

  @AfterEach
  void resetTime() {
    VirtualTimeScheduler.reset();
  }

  /** Four calls of one task, then one call of another, through {@code limit}; what each got, by task. */
  private void oneTaskFillsTheQueueAnotherStillGetsIn(Function<Publisher<String>, Publisher<String>> limit,
      Runnable freePermits) {
    List<String> first = new CopyOnWriteArrayList<>();
    Flux.range(0, 4)
        .flatMap(i -> Mono.just("a" + i).transformDeferred(limit)
            .onErrorResume(LimitExceededException.class, e -> Mono.just(e.reason().name())))
        .transformDeferred(withTaskBudget(budget))
        .subscribe(first::add);
    time.advanceTime();
    assertThat(first).as("the first task's calls past its share of 2").containsExactly("QUEUE_FULL", "QUEUE_FULL");

    List<Object> second = new CopyOnWriteArrayList<>();
    Mono.just("b").transformDeferred(limit).transformDeferred(withTaskBudget(budget))
        .subscribe(second::add, second::add);
    time.advanceTime();
    assertThat(second).as("the other task's call waits, it is not refused").isEmpty();

    freePermits.run();
    assertThat(second).containsExactly("b");
    assertThat(first).containsExactlyInAnyOrder("QUEUE_FULL", "QUEUE_FULL", "a0", "a1");
  }

  @Test
  void aTaskThatFillsItsShareOfAConcurrencyQueueLeavesRoomForAnotherTask() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("search").fixed(1).maxQueue(4).build();
    Sinks.Empty<Void> holder = Sinks.empty();
    holder.asMono().transformDeferred(limitedBy(limit)).subscribe();
    oneTaskFillsTheQueueAnotherStillGetsIn(limitedBy(limit), holder::tryEmitEmpty);
    assertThat(limit.queued()).isZero();
    assertThat(limit.inFlight()).isZero();
  }

  @Test
  void aTaskThatFillsItsShareOfARateQueueLeavesRoomForAnotherTask() {
    RateLimit limit = RateLimit.builder("openai").requests(1, Duration.ofMinutes(1)).maxWait(Duration.ofMinutes(30))
        .maxQueue(4).build();
    Mono.just("first").transformDeferred(throttledBy(limit)).subscribe();   // takes the only request of the minute
    oneTaskFillsTheQueueAnotherStillGetsIn(throttledBy(limit), () -> time.advanceTimeBy(Duration.ofMinutes(10)));
    assertThat(limit.queued()).isZero();
  }

  @Test
  void callsOutsideAnyTaskAreBoundedByMaxQueueOnly() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("search").fixed(1).maxQueue(4).build();
    Sinks.Empty<Void> holder = Sinks.empty();
    holder.asMono().transformDeferred(limitedBy(limit)).subscribe();
    for (int i = 0; i < 4; i++) {
      Mono.just("c").transformDeferred(limitedBy(limit)).subscribe();
    }
    assertThat(limit.queued()).isEqualTo(4);
    holder.tryEmitEmpty();
  }

  @Test
  void maxQueuePerTaskIsValidatedAgainstMaxQueue() {
    assertThatThrownBy(() -> ConcurrencyLimit.builder("search").fixed(1).maxQueue(4).maxQueuePerTask(5).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'search' maxQueuePerTask is 5: give 1 to maxQueue (4)");
    assertThatThrownBy(() -> RateLimit.builder("openai").requests(1, Duration.ofMinutes(1)).maxQueuePerTask(0)
        .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'openai' maxQueuePerTask is 0");
    assertThat(ConcurrencyLimit.builder("search").fixed(1).maxQueue(4).maxQueuePerTask(4).build()).isNotNull();
  }
}
