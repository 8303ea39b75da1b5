package io.breakwater.stream;

import static io.breakwater.Breakwater.firstItemTimeout;
import static io.breakwater.Breakwater.idleTimeout;
import static io.breakwater.Breakwater.streamTimeouts;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import io.breakwater.testing.TaskCountingScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;
import reactor.test.scheduler.VirtualTimeScheduler;

class StreamTimeoutsTest {

  private static StreamTimeouts idle(Duration d, VirtualTimeScheduler vts) {
    return StreamTimeouts.builder().idle(d).scheduler(() -> vts).build();
  }

  /** Emits "tok" at each of {@code times} (ms from subscription), then nothing, on {@code vts}. */
  private static Flux<String> tokensAt(VirtualTimeScheduler vts, long... times) {
    return Flux.fromArray(java.util.Arrays.stream(times).boxed().toArray(Long[]::new))
        .concatMap(t -> Mono.delay(Duration.ofMillis(t), vts).map(x -> "tok"))
        .concatWith(Flux.never());
  }

  /** Subscribes, advances virtual time in 1 ms steps, and returns when (ms) the error arrived. */
  private static long errorTimeMillis(Flux<String> flux, VirtualTimeScheduler vts, long horizonMillis,
      AtomicReference<Throwable> error) {
    AtomicLong at = new AtomicLong(-1);
    Disposable d = flux.subscribe(x -> {}, e -> {
      error.set(e);
      at.set(vts.now(TimeUnit.MILLISECONDS));
    });
    for (long t = 0; t < horizonMillis && at.get() < 0; t++) {
      vts.advanceTimeBy(Duration.ofMillis(1));
    }
    d.dispose();
    return at.get();
  }

  @Test
  void aStallIsDetectedBetweenTheTimeoutAndAQuarterMoreAfterTheLastProgress() {
    long seed = 0x1D1E_0006L;
    SplittableRandom random = new SplittableRandom(seed);
    for (int round = 0; round < 200; round++) {
      VirtualTimeScheduler vts = VirtualTimeScheduler.create();
      long idleMillis = 100 + random.nextInt(4000);
      int items = random.nextInt(5);
      long[] gaps = new long[items];
      long last = 0;
      for (int i = 0; i < items; i++) {
        gaps[i] = random.nextLong(idleMillis); // each gap shorter than the timeout: no stall before the last item
        last += gaps[i];
      }
      AtomicReference<Throwable> error = new AtomicReference<>();
      long at = errorTimeMillis(tokensAt(vts, gaps).transform(
          io.breakwater.Breakwater.streamTimeouts(idle(Duration.ofMillis(idleMillis), vts))), vts,
          last + 3 * idleMillis, error);
      assertThat(error.get()).as("seed %d round %d", seed, round).isInstanceOf(IdleTimeoutException.class);
      assertThat(at).as("seed %d round %d: last progress at %d, idle %d", seed, round, last, idleMillis)
          .isBetween(last + idleMillis, last + idleMillis + idleMillis / StreamTimeouts.TICKS_PER_TIMEOUT + 1);
      assertThat(((IdleTimeoutException) error.get()).sinceProgress()).isGreaterThanOrEqualTo(
          Duration.ofMillis(idleMillis));
    }
  }

  @Test
  void idleTimeoutErrorIsATypedTimeoutWithTheDurations() {
    StepVerifier.withVirtualTime(() -> Flux.never().transformDeferred(idleTimeout(Duration.ofSeconds(4))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(4).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(TimeoutException.class).isInstanceOf(IdleTimeoutException.class);
          IdleTimeoutException idle = (IdleTimeoutException) e;
          assertThat(idle.failureKind()).isEqualTo(FailureKind.TIMEOUT);
          assertThat(idle.source()).isEqualTo("idleTimeout");
          assertThat(idle.idleTimeout()).isEqualTo(Duration.ofSeconds(4));
          assertThat(idle.sinceProgress()).isEqualTo(Duration.ofSeconds(4));
          assertThat(idle.getMessage()).isEqualTo("Stream made no progress for 4s (idle timeout 4s)");
          assertThat(idle.getStackTrace()).isEmpty();
        })
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void heartbeatsDoNotCountAsProgress() {
    StepVerifier.withVirtualTime(() -> Flux.just("tok")
            .concatWith(Flux.interval(Duration.ofMillis(500)).map(i -> "ping"))
            .transformDeferred(idleTimeout(Duration.ofSeconds(2), s -> !s.equals("ping"))))
        .expectSubscription()
        .expectNext("tok")
        .thenAwait(Duration.ofMillis(1999))
        .expectNext("ping", "ping", "ping")
        .thenAwait(Duration.ofSeconds(1))
        .thenConsumeWhile("ping"::equals)
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IdleTimeoutException.class))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void withoutAProgressTestEveryItemIsProgress() {
    StepVerifier.withVirtualTime(() -> Flux.interval(Duration.ofMillis(500)).take(20)
            .transformDeferred(idleTimeout(Duration.ofSeconds(2))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(10))
        .expectNextCount(20)
        .verifyComplete();
  }

  @Test
  void firstItemTimeoutFiresExactlyAtTheTimeout() {
    StepVerifier.withVirtualTime(() -> Flux.never().transformDeferred(firstItemTimeout(Duration.ofSeconds(10))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(10).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> {
          FirstItemTimeoutException first = (FirstItemTimeoutException) e;
          assertThat(first).isInstanceOf(TimeoutException.class).isInstanceOf(BreakwaterException.class);
          assertThat(first.failureKind()).isEqualTo(FailureKind.TIMEOUT);
          assertThat(first.firstItemTimeout()).isEqualTo(Duration.ofSeconds(10));
          assertThat(first.waited()).isEqualTo(Duration.ofSeconds(10));
          assertThat(first.getStackTrace()).isEmpty();
        })
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void firstItemTimeoutStopsWatchingAfterTheFirstItem() {
    StepVerifier.withVirtualTime(() -> Flux.just(1).concatWith(Mono.delay(Duration.ofHours(1)).thenReturn(2))
            .transformDeferred(firstItemTimeout(Duration.ofSeconds(10))))
        .expectSubscription()
        .expectNext(1)
        .thenAwait(Duration.ofHours(1))
        .expectNext(2)
        .verifyComplete();
  }

  @Test
  void heartbeatsDoNotCountAsAFirstItem() {
    StreamTimeouts first = StreamTimeouts.builder().firstItem(Duration.ofSeconds(5)).build();
    StepVerifier.withVirtualTime(() -> Flux.interval(Duration.ofSeconds(1)).map(i -> "ping")
            .transformDeferred(streamTimeouts(first, s -> !s.equals("ping"))))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(4999))
        .expectNext("ping", "ping", "ping", "ping")
        .thenAwait(Duration.ofMillis(1))
        .thenConsumeWhile("ping"::equals)
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(FirstItemTimeoutException.class))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void aSlowFirstItemIsJudgedByTheFirstItemTimeoutThenTheIdleClockRuns() {
    StreamTimeouts timeouts = StreamTimeouts.builder().firstItem(Duration.ofSeconds(30))
        .idle(Duration.ofSeconds(4)).build();
    StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofSeconds(20)).thenReturn("tok")
            .concatWith(Flux.never())
            .transformDeferred(streamTimeouts(timeouts)))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(20))
        .expectNext("tok")
        .expectNoEvent(Duration.ofSeconds(4).minusNanos(1))
        .thenAwait(Duration.ofSeconds(1))
        .expectErrorSatisfies(e -> assertThat(((IdleTimeoutException) e).idleTimeout())
            .isEqualTo(Duration.ofSeconds(4)))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void timingOutCancelsUpstream() {
    PublisherProbe<Object> probe = PublisherProbe.of(Flux.never());
    StepVerifier.withVirtualTime(() -> probe.flux().transformDeferred(idleTimeout(Duration.ofSeconds(1))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectError(IdleTimeoutException.class)
        .verify(Duration.ofSeconds(5));
    probe.assertWasCancelled();
  }

  @Test
  void anUpstreamEndCausedByTheTimeoutsOwnCancellationGivesWayToTheTimeout() {
    // Like a connection that completes its body when cancelled (closed).
    Flux<Integer> completesWhenCancelled = Flux.from(s -> s.onSubscribe(new org.reactivestreams.Subscription() {
      @Override
      public void request(long n) {}

      @Override
      public void cancel() {
        s.onComplete();
      }
    }));
    StepVerifier.withVirtualTime(() -> completesWhenCancelled.transformDeferred(idleTimeout(Duration.ofSeconds(1))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectError(IdleTimeoutException.class)
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void defaultsComeFromTheDeadline() {
    // per-call = min(10 s × 0.6, 12 s) = 6 s; idle = min(6 s × 0.3, 3 s) = 1.8 s
    StepVerifier.withVirtualTime(() -> Flux.never().transformDeferred(idleTimeout())
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(1800))
        .expectErrorSatisfies(e -> assertThat(((IdleTimeoutException) e).idleTimeout())
            .isEqualTo(Duration.ofMillis(1800)))
        .verify(Duration.ofSeconds(5));
    StepVerifier.withVirtualTime(() -> Flux.never().transformDeferred(firstItemTimeout())
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(6).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> assertThat(((FirstItemTimeoutException) e).firstItemTimeout())
            .isEqualTo(Duration.ofSeconds(6)))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void withoutADeadlineTheDefaultsAreThreeAndTwelveSeconds() {
    StepVerifier.withVirtualTime(() -> Flux.never().transformDeferred(idleTimeout()))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(3).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectError(IdleTimeoutException.class)
        .verify(Duration.ofSeconds(5));
    StepVerifier.withVirtualTime(() -> Flux.never().transformDeferred(firstItemTimeout()))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(12).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectError(FirstItemTimeoutException.class)
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void aMonoStaysAMono() {
    assertThat(Mono.just(1).transformDeferred(idleTimeout(Duration.ofSeconds(1)))).isInstanceOf(Mono.class);
    StepVerifier.withVirtualTime(() -> Mono.never().transformDeferred(firstItemTimeout(Duration.ofSeconds(2))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(2))
        .expectError(FirstItemTimeoutException.class)
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void oneTimerPerSubscriptionNotOnePerItem() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    TaskCountingScheduler counting = new TaskCountingScheduler(vts);
    StreamTimeouts timeouts = StreamTimeouts.builder().idle(Duration.ofSeconds(4)).scheduler(() -> counting).build();
    AtomicLong received = new AtomicLong();
    Flux.range(0, 100_000).transform(streamTimeouts(timeouts)).subscribe(i -> received.incrementAndGet());
    assertThat(received.get()).isEqualTo(100_000);
    assertThat(counting.scheduledTasks()).as("a source that ends synchronously arms no timer").isZero();

    Disposable open = Flux.range(0, 100_000).concatWith(Flux.never()).transform(streamTimeouts(timeouts))
        .subscribe(i -> received.incrementAndGet());
    assertThat(received.get()).isEqualTo(200_000);
    assertThat(counting.scheduledTasks()).isEqualTo(1);
    assertThat(counting.pendingTasks()).isEqualTo(1);
    open.dispose();
    assertThat(counting.pendingTasks()).isZero();
  }

  @Test
  void aStreamThatEndsDuringItsSubscriptionArmsNoTimerEvenWhenOnSubscribeComesBeforeItsSource() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    TaskCountingScheduler counting = new TaskCountingScheduler(vts);
    StreamTimeouts timeouts = StreamTimeouts.builder().idle(Duration.ofSeconds(4)).scheduler(() -> counting).build();
    List<String> received = new ArrayList<>();
    // retry passes onSubscribe down before it subscribes to its source, which then answers and ends at once
    Flux.just("a", "b").retry(1).transform(streamTimeouts(timeouts)).subscribe(received::add);
    assertThat(received).containsExactly("a", "b");
    assertThat(counting.scheduledTasks()).isZero();
  }

  @Test
  void aSourceThatSignalsOnSubscribeLaterFromAnotherThreadIsStillWatched() throws InterruptedException {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    AtomicReference<CoreSubscriber<? super String>> subscriber = new AtomicReference<>();
    Flux<String> late = new Flux<>() {
      @Override
      public void subscribe(CoreSubscriber<? super String> actual) {
        subscriber.set(actual);   // onSubscribe comes later, from elsewhere
      }
    };
    AtomicReference<Throwable> error = new AtomicReference<>();
    late.transform(streamTimeouts(idle(Duration.ofSeconds(2), vts))).subscribe(x -> {}, error::set);
    Thread other = new Thread(() -> subscriber.get().onSubscribe(Operators.emptySubscription()));
    other.start();
    other.join();

    vts.advanceTimeBy(Duration.ofSeconds(2).minusNanos(1));
    assertThat(error.get()).isNull();
    vts.advanceTimeBy(Duration.ofNanos(1));
    assertThat(error.get()).isInstanceOf(IdleTimeoutException.class);
  }

  @Test
  void noTimerIsLeftAfterCancellationCompletionOrError() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    TaskCountingScheduler counting = new TaskCountingScheduler(vts);
    StreamTimeouts timeouts = StreamTimeouts.builder().firstItem(Duration.ofSeconds(30)).idle(Duration.ofSeconds(4))
        .scheduler(() -> counting).build();
    for (int i = 0; i < 1000; i++) {
      Disposable d = Flux.interval(Duration.ofMillis(700), vts).transform(streamTimeouts(timeouts)).subscribe();
      vts.advanceTimeBy(Duration.ofMillis(i % 10 * 500));
      d.dispose();
    }
    assertThat(counting.pendingTasks()).isZero();
    Flux.just(1).concatWith(Mono.delay(Duration.ofSeconds(2), vts).then(Mono.error(new IllegalStateException())))
        .transform(streamTimeouts(timeouts)).subscribe(x -> {}, e -> {});
    vts.advanceTimeBy(Duration.ofSeconds(3));
    assertThat(counting.pendingTasks()).isZero();
    Flux.never().transform(streamTimeouts(timeouts)).subscribe(x -> {}, e -> {});
    vts.advanceTimeBy(Duration.ofSeconds(31));
    assertThat(counting.pendingTasks()).isZero();
  }

  @Test
  void timeoutsAreCountedByType() {
    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    StreamTimeouts timeouts = StreamTimeouts.builder().firstItem(Duration.ofSeconds(2)).idle(Duration.ofSeconds(1))
        .meterRegistry(registry).build();
    StepVerifier.withVirtualTime(() -> Flux.never().transformDeferred(streamTimeouts(timeouts)))
        .expectSubscription().thenAwait(Duration.ofSeconds(2)).expectError(FirstItemTimeoutException.class)
        .verify(Duration.ofSeconds(5));
    StepVerifier.withVirtualTime(() -> Flux.just(1).concatWith(Flux.never()).transformDeferred(streamTimeouts(timeouts)))
        .expectSubscription().expectNext(1).thenAwait(Duration.ofSeconds(2)).expectError(IdleTimeoutException.class)
        .verify(Duration.ofSeconds(5));
    assertThat(registry.get("breakwater.stream.timeouts").tag("type", "first_item").counter().count()).isEqualTo(1);
    assertThat(registry.get("breakwater.stream.timeouts").tag("type", "idle").counter().count()).isEqualTo(1);
  }

  /** P8's second half: many concurrent streams hold one pending timer each, and none once cancelled. */
  @Test
  void tenThousandConcurrentStreamsHoldOneTimerEachAndNoneAfterCancellation() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    TaskCountingScheduler counting = new TaskCountingScheduler(vts);
    StreamTimeouts timeouts = StreamTimeouts.builder().firstItem(Duration.ofSeconds(30)).idle(Duration.ofSeconds(3))
        .scheduler(() -> counting).build();
    List<Disposable> streams = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      streams.add(Flux.interval(Duration.ofMillis(500 + i % 7), vts).transform(streamTimeouts(timeouts)).subscribe());
    }
    assertThat(counting.pendingTasks()).isEqualTo(10_000);
    vts.advanceTimeBy(Duration.ofSeconds(10)); // ticks re-arm: still one pending timer per stream
    assertThat(counting.pendingTasks()).isEqualTo(10_000);
    streams.forEach(Disposable::dispose);
    assertThat(counting.pendingTasks()).isZero();
  }

  @Test
  void configsAreValidated() {
    assertThatThrownBy(() -> StreamTimeouts.builder().build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("neither a first-item nor an idle timeout");
    assertThatThrownBy(() -> idleTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("idle timeout is PT0S: give a positive duration");
  }

  /**
   * Race: heartbeats are emitted from another thread while real timers time the stream out. The error must come
   * exactly once, never during or before... an onNext in progress, and nothing may follow it.
   */
  @Test
  void theTimeoutNeverOverlapsAnItemBeingDelivered() throws Exception {
    for (int round = 0; round < 200; round++) {
      SerialCheckingSubscriber<String> subscriber = new SerialCheckingSubscriber<>();
      Flux.<String>create(sink -> {
            Thread t = new Thread(() -> {
              while (!sink.isCancelled()) {
                sink.next("ping");
              }
            });
            t.setDaemon(true);
            t.start();
          })
          .transform(idleTimeout(Duration.ofNanos(200_000 + round * 1_000L), s -> !s.equals("ping")))
          .subscribe(subscriber);
      assertThat(subscriber.terminated.await(10, TimeUnit.SECONDS)).isTrue();
      Thread.sleep(2);
      assertThat(subscriber.violations).as("round %d", round).isEmpty();
      assertThat(subscriber.error.get()).isInstanceOf(IdleTimeoutException.class);
    }
  }

  @Test
  void streamTimeoutsWhoseSchedulerIsDisposedFailTheStreamWithARejectionAndCancelUpstream() {
    reactor.core.scheduler.Scheduler disposed = reactor.core.scheduler.Schedulers.newSingle("disposed-stream-clock");
    disposed.dispose();
    PublisherProbe<String> stream = PublisherProbe.of(Flux.never());
    StepVerifier.create(stream.flux().transform(streamTimeouts(StreamTimeouts.builder()
            .firstItem(Duration.ofSeconds(5)).idle(Duration.ofSeconds(1)).scheduler(() -> disposed).build())))
        .expectError(java.util.concurrent.RejectedExecutionException.class)
        .verify(Duration.ofSeconds(5));
    stream.assertWasCancelled();
  }

  static final class SerialCheckingSubscriber<T> extends reactor.core.publisher.BaseSubscriber<T> {
    final java.util.concurrent.CountDownLatch terminated = new java.util.concurrent.CountDownLatch(1);
    final List<String> violations = new java.util.concurrent.CopyOnWriteArrayList<>();
    final AtomicReference<Throwable> error = new AtomicReference<>();
    private final java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean done;

    @Override
    protected void hookOnNext(T value) {
      enter("onNext");
      if (done) {
        violations.add("onNext after the terminal signal");
      }
      inside.decrementAndGet();
    }

    @Override
    protected void hookOnError(Throwable throwable) {
      enter("onError");
      if (done) {
        violations.add("second terminal signal");
      }
      done = true;
      error.set(throwable);
      inside.decrementAndGet();
      terminated.countDown();
    }

    private void enter(String what) {
      if (inside.incrementAndGet() != 1) {
        violations.add(what + " overlapped another signal");
      }
    }
  }
}
