package io.breakwater.deadline;

import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The deadline timer fires on one thread while items arrive on another. Whatever the interleaving, the subscriber
 * must see serial signals: never an error during an item, exactly one terminal signal, nothing after it.
 */
class DeadlineRaceTest {

  @Test
  void timerAndItemsNeverOverlapAndTerminateExactlyOnce() throws InterruptedException {
    Scheduler emitter = Schedulers.newSingle("emitter");
    try {
      for (int i = 0; i < 300; i++) {
        SerialCheckingSubscriber subscriber = new SerialCheckingSubscriber();
        Flux.range(0, Integer.MAX_VALUE)
            .publishOn(emitter, 32)
            .transformDeferred(withDeadline(Duration.ofMillis(1 + i % 3)))
            .subscribe(subscriber);

        assertThat(subscriber.done.await(10, TimeUnit.SECONDS)).as("terminated").isTrue();
        Thread.sleep(1); // let any late signal arrive
        assertThat(subscriber.overlaps.get()).as("overlapping signals").isZero();
        assertThat(subscriber.terminals.get()).as("terminal signals").isEqualTo(1);
        assertThat(subscriber.afterTerminal.get()).as("signals after the terminal one").isZero();
        assertThat(subscriber.error).isInstanceOf(DeadlineExceededException.class);
      }
    } finally {
      emitter.dispose();
    }
  }

  private static final class SerialCheckingSubscriber implements CoreSubscriber<Integer> {
    final AtomicInteger inside = new AtomicInteger();
    final AtomicInteger work = new AtomicInteger();
    final AtomicInteger overlaps = new AtomicInteger();
    final AtomicInteger terminals = new AtomicInteger();
    final AtomicInteger afterTerminal = new AtomicInteger();
    final CountDownLatch done = new CountDownLatch(1);
    volatile Throwable error;

    private void enter() {
      if (inside.getAndIncrement() != 0) {
        overlaps.incrementAndGet();
      }
      if (terminals.get() > 0) {
        afterTerminal.incrementAndGet();
      }
    }

    @Override
    public void onSubscribe(Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(Integer item) {
      enter();
      for (int spin = 0; spin < 64; spin++) {
        work.incrementAndGet(); // widen the window in which the timer can fire mid-item
      }
      inside.decrementAndGet();
    }

    @Override
    public void onError(Throwable t) {
      enter();
      error = t;
      terminals.incrementAndGet();
      inside.decrementAndGet();
      done.countDown();
    }

    @Override
    public void onComplete() {
      enter();
      terminals.incrementAndGet();
      inside.decrementAndGet();
      done.countDown();
    }
  }
}
