package io.breakwater.stream;

import static io.breakwater.Breakwater.streamTimeouts;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.TaskCountingScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Subscription;
import reactor.core.Scannable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.publisher.TestPublisher;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.Context;

/**
 * What the stream timeouts promise in both modes, exact (the default) and coarse ({@code StreamTimeouts.builder()
 * .coarse()}, a stall detected between d and d + d/4 after the last progress, never earlier): progress tests,
 * items and errors after a timeout, a timeout decided while an item is being delivered, what Reactor's scans see.
 */
class StreamTimeoutModesTest {

  private final VirtualTimeScheduler vts = VirtualTimeScheduler.create();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final List<Object> seen = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    vts.dispose();
  }

  private StreamTimeouts.Builder builder(boolean coarse) {
    StreamTimeouts.Builder b = StreamTimeouts.builder().scheduler(() -> vts).meterRegistry(meters);
    return coarse ? b.coarse() : b;
  }

  private long now() {
    return vts.now(TimeUnit.MILLISECONDS);
  }

  /** Records items, and the error or the end with the virtual instant it came at. */
  private class Recorder extends BaseSubscriber<String> {
    @Override
    protected void hookOnNext(String value) {
      seen.add(value);
    }

    @Override
    protected void hookOnError(Throwable e) {
      seen.add(e.getClass().getSimpleName() + "@" + now());
    }

    @Override
    protected void hookOnComplete() {
      seen.add("complete@" + now());
    }
  }

  @ParameterizedTest(name = "coarse={0}")
  @ValueSource(booleans = {false, true})
  void heartbeatsAreDeliveredButDoNotHoldOffTheIdleTimeout(boolean coarse) {
    Sinks.Many<String> source = Sinks.many().unicast().onBackpressureBuffer();
    source.asFlux().transformDeferred(streamTimeouts(builder(coarse).idle(Duration.ofSeconds(4)).build(),
        s -> !s.equals("ping"))).subscribe(new Recorder());
    vts.advanceTimeBy(Duration.ofMillis(500));
    source.tryEmitNext("tok");
    for (int i = 0; i < 30 && seen.size() < 31; i++) {
      vts.advanceTimeBy(Duration.ofMillis(200));
      source.tryEmitNext("ping");
    }
    assertThat(seen).as("the pings up to 4.5 s are delivered").startsWith("tok", "ping", "ping");
    Object end = seen.get(seen.size() - 1);
    long at = Long.parseLong(end.toString().substring(end.toString().indexOf('@') + 1));
    assertThat(end.toString()).startsWith("IdleTimeoutException@");
    assertThat(at).as("between d and d + d/4 after the last progress (exactly d when exact)")
        .isBetween(4_500L, coarse ? 5_500L : 4_500L);
    assertThat(meters.get("breakwater.stream.timeouts").tag("type", "idle").counter().count()).isEqualTo(1);
  }

  @ParameterizedTest(name = "coarse={0}")
  @ValueSource(booleans = {false, true})
  void aProgressTestThatThrowsFailsTheStreamWithItsErrorAndCancelsUpstream(boolean coarse) {
    TestPublisher<String> source = TestPublisher.create();
    Predicate<String> broken = s -> {
      throw new IllegalStateException("progress test broke on " + s);
    };
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    source.flux().transformDeferred(streamTimeouts(builder(coarse).idle(Duration.ofSeconds(4)).build(), broken))
        .subscribe(seen::add, errors::add);
    source.next("tok");
    assertThat(seen).as("the item it threw on is not delivered").isEmpty();
    assertThat(errors).singleElement().satisfies(e -> assertThat(e).hasMessage("progress test broke on tok"));
    source.assertCancelled();
    vts.advanceTimeBy(Duration.ofMinutes(1));
    assertThat(errors).as("no timeout after the error").hasSize(1);
  }

  @ParameterizedTest(name = "coarse={0}")
  @ValueSource(booleans = {false, true})
  void aFirstItemTimeoutAloneFiresAtItsTimeoutAndStopsWatchingAfterTheFirstItem(boolean coarse) {
    TaskCountingScheduler counting = new TaskCountingScheduler(vts);
    StreamTimeouts first = builder(coarse).firstItem(Duration.ofSeconds(10)).scheduler(() -> counting).build();
    Sinks.Many<String> silent = Sinks.many().unicast().onBackpressureBuffer();
    silent.asFlux().transformDeferred(streamTimeouts(first)).subscribe(new Recorder());
    vts.advanceTimeBy(Duration.ofSeconds(10).minusMillis(1));
    assertThat(seen).isEmpty();
    vts.advanceTimeBy(Duration.ofMillis(1));
    assertThat(seen).containsExactly("FirstItemTimeoutException@10000");

    // subscribed later: the error says how long this subscription waited, not the clock's reading
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    Sinks.Many<String> later = Sinks.many().unicast().onBackpressureBuffer();
    later.asFlux().transformDeferred(streamTimeouts(first)).subscribe(v -> {}, errors::add);
    vts.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(errors).singleElement().isInstanceOfSatisfying(FirstItemTimeoutException.class, e -> {
      assertThat(e.firstItemTimeout()).isEqualTo(Duration.ofSeconds(10));
      assertThat(e.waited()).isEqualTo(Duration.ofSeconds(10));
    });

    seen.clear();
    Sinks.Many<String> answering = Sinks.many().unicast().onBackpressureBuffer();
    answering.asFlux().transformDeferred(streamTimeouts(first)).subscribe(new Recorder());
    vts.advanceTimeBy(Duration.ofSeconds(3));
    answering.tryEmitNext("tok");
    vts.advanceTimeBy(Duration.ofHours(1));
    answering.tryEmitNext("late but fine");
    answering.tryEmitComplete();
    assertThat(seen).containsExactly("tok", "late but fine", "complete@3623000");
    assertThat(counting.pendingTasks()).as("no timer left once the first item came").isZero();
  }

  @ParameterizedTest(name = "coarse={0}")
  @ValueSource(booleans = {false, true})
  void aSlowFirstItemIsJudgedByTheFirstItemTimeoutThenTheIdleClockRunsFromIt(boolean coarse) {
    Sinks.Many<String> source = Sinks.many().unicast().onBackpressureBuffer();
    source.asFlux().transformDeferred(streamTimeouts(builder(coarse).firstItem(Duration.ofSeconds(30))
        .idle(Duration.ofSeconds(4)).build())).subscribe(new Recorder());
    vts.advanceTimeBy(Duration.ofSeconds(20));
    assertThat(seen).as("20 s without an item: within the first-item timeout, though past the idle one").isEmpty();
    source.tryEmitNext("tok");
    vts.advanceTimeBy(Duration.ofSeconds(4).minusMillis(1));
    assertThat(seen).containsExactly("tok");
    vts.advanceTimeBy(Duration.ofSeconds(2));
    assertThat(seen).hasSize(2);
    long at = Long.parseLong(seen.get(1).toString().replace("IdleTimeoutException@", ""));
    assertThat(at).isBetween(24_000L, coarse ? 25_000L : 24_000L);
  }

  @ParameterizedTest(name = "coarse={0}")
  @ValueSource(booleans = {false, true})
  void aTimeoutDecidedWhileAnItemIsBeingDeliveredIsSignalledOnceTheItemReturns(boolean coarse) {
    // The consumer holds one item for 6 s of virtual time (it advances the clock inside onNext, so the timer fires on
    // this thread while the item is being delivered): the timeout must not overlap the item, and must not be lost.
    Sinks.Many<String> source = Sinks.many().unicast().onBackpressureBuffer();
    AtomicBoolean cancelled = new AtomicBoolean();
    source.asFlux().doOnCancel(() -> cancelled.set(true))
        .transformDeferred(streamTimeouts(builder(coarse).idle(Duration.ofSeconds(4)).build()))
        .subscribe(new BaseSubscriber<>() {
          @Override
          protected void hookOnNext(String value) {
            seen.add(value);
            vts.advanceTimeBy(Duration.ofSeconds(6));
            seen.add("upstream cancelled while the item is held: " + cancelled.get());
            seen.add(value + " returned");
          }

          @Override
          protected void hookOnError(Throwable e) {
            seen.add(e.getClass().getSimpleName());
          }
        });
    vts.advanceTimeBy(Duration.ofSeconds(1));
    source.tryEmitNext("slow");
    assertThat(seen).containsExactly("slow", "upstream cancelled while the item is held: true", "slow returned",
        "IdleTimeoutException");
    vts.advanceTimeBy(Duration.ofMinutes(1));
    assertThat(seen).hasSize(4);
    assertThat(meters.get("breakwater.stream.timeouts").tag("type", "idle").counter().count()).isEqualTo(1);
  }

  @ParameterizedTest(name = "coarse={0}")
  @ValueSource(booleans = {false, true})
  void whatUpstreamSendsAfterTheTimeoutIsDiscardedOrDroppedNeverDelivered(boolean coarse) {
    // a source that keeps going after it was cancelled (Reactive Streams allows items in flight to arrive)
    TestPublisher<String> source = TestPublisher.createNoncompliant(TestPublisher.Violation.DEFER_CANCELLATION);
    List<Object> discarded = new CopyOnWriteArrayList<>();
    List<Throwable> dropped = new CopyOnWriteArrayList<>();
    source.flux().transformDeferred(streamTimeouts(builder(coarse).idle(Duration.ofSeconds(4)).build()))
        .doOnDiscard(String.class, discarded::add)
        .contextWrite(Context.of("reactor.onErrorDropped.local",
            (Consumer<Throwable>) dropped::add))
        .subscribe(new Recorder());
    source.next("tok");
    vts.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(seen).hasSize(2).first().isEqualTo("tok");
    assertThat(seen.get(1).toString()).startsWith("IdleTimeoutException@");
    source.assertCancelled();

    source.next("late");
    source.error(new IllegalStateException("late error"));
    source.complete();
    assertThat(seen).as("nothing after the timeout").hasSize(2);
    assertThat(discarded).containsExactly("late");
    assertThat(dropped).singleElement().satisfies(e -> assertThat(e).hasMessage("late error"));
  }

  @ParameterizedTest(name = "coarse={0}")
  @ValueSource(booleans = {false, true})
  void anUpstreamEndCausedByTheTimeoutsCancellationGivesWayToTheTimeout(boolean coarse) {
    // like a connection that completes, or fails, when it is closed
    for (boolean fails : new boolean[] {false, true}) {
      seen.clear();
      Flux<String> endsWhenCancelled = Flux.from(s -> s.onSubscribe(new Subscription() {
        @Override
        public void request(long n) {}

        @Override
        public void cancel() {
          if (fails) {
            s.onError(new IllegalStateException("connection closed"));
          } else {
            s.onComplete();
          }
        }
      }));
      endsWhenCancelled.transformDeferred(streamTimeouts(builder(coarse).idle(Duration.ofSeconds(4)).build()))
          .subscribe(new Recorder());
      vts.advanceTimeBy(Duration.ofSeconds(10));
      assertThat(seen).as(fails ? "fails when closed" : "completes when closed").singleElement()
          .satisfies(e -> assertThat(e.toString()).startsWith("IdleTimeoutException@"));
    }
  }

  @Test
  void reactorsScansSeeTheOperatorItsSchedulerAndWhetherItEnded() {
    TestPublisher<String> source = TestPublisher.create();
    List<Scannable> operators = new CopyOnWriteArrayList<>();
    Recorder recorder = new Recorder() {
      @Override
      protected void hookOnSubscribe(Subscription subscription) {
        operators.add(Scannable.from(subscription));
        super.hookOnSubscribe(subscription);
      }
    };
    source.flux().transformDeferred(streamTimeouts(builder(false).idle(Duration.ofSeconds(4)).build()))
        .subscribe(recorder);
    Scannable operator = operators.get(0);
    assertThat(operator.name()).isEqualTo("streamTimeouts");
    assertThat(operator.scanUnsafe(Scannable.Attr.RUN_ON)).isSameAs(vts);
    assertThat(operator.scan(Scannable.Attr.RUN_STYLE)).isEqualTo(Scannable.Attr.RunStyle.SYNC);
    assertThat(operator.scanUnsafe(Scannable.Attr.ACTUAL)).isSameAs(recorder);
    assertThat(operator.scanUnsafe(Scannable.Attr.PARENT)).isInstanceOf(Subscription.class);
    assertThat(operator.scan(Scannable.Attr.TERMINATED)).isFalse();
    assertThat(operator.scan(Scannable.Attr.CANCELLED)).isFalse();
    assertThat(operator.scanUnsafe(Scannable.Attr.PREFETCH)).as("what it does not know").isNull();
    source.complete();
    assertThat(operator.scan(Scannable.Attr.TERMINATED)).isTrue();
    assertThat(operator.scan(Scannable.Attr.CANCELLED)).isTrue();
  }
}
