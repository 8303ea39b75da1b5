package io.breakwater.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The "synchronous on request" verification every hand-written subscriber must pass, beside its Reactive Streams TCK
 * whitebox test: its source emits from inside {@code request(n)}, recursively ({@link RecursiveOnRequestPublisher}),
 * and the downstream requests one item at a time from inside {@code onNext}, so items and terminal signals arrive
 * while the subscriber's own {@code onNext} is still on the stack. Every item and the terminal signal must be
 * delivered once, in order, and no timer may fire afterwards (time is virtual and advanced well past any timeout).
 *
 * <p>Subclasses give the operator that puts the subscriber under test, resolved inside virtual time.
 */
public abstract class SynchronousOnRequestVerification {

  /** Long enough for every timer of the operator under test to have fired, were one left armed. */
  protected static final Duration AFTERWARDS = Duration.ofHours(1);

  private VirtualTimeScheduler vts;

  /** The operator under test, for a {@code Flux} source (or a {@code Mono} one when {@link #monoOnly()}). */
  protected abstract <T> Function<Publisher<T>, Publisher<T>> operator();

  /** Whether the operator works on {@code Mono}s only, so that sources emit at most one item. */
  protected boolean monoOnly() {
    return false;
  }

  @BeforeEach
  void virtualTime() {
    vts = VirtualTimeScheduler.getOrSet();
  }

  @AfterEach
  void realTime() {
    VirtualTimeScheduler.reset();
  }

  private List<Integer> items() {
    return monoOnly() ? List.of(1) : IntStream.rangeClosed(1, 20).boxed().toList();
  }

  private Publisher<Integer> source(RecursiveOnRequestPublisher<Integer> publisher) {
    return monoOnly() ? Mono.fromDirect(publisher) : Flux.from(publisher);
  }

  /** Runs {@code publisher} through the operator into a downstream that requests {@code initial} and then one item
   * from inside each {@code onNext} (cancelling at {@code cancelAt}, if positive); returns the signals seen. */
  private List<String> run(RecursiveOnRequestPublisher<Integer> publisher, long initial, int cancelAt) {
    SignalRecorder<Integer> downstream = new SignalRecorder<>(initial, (self, value) -> {
      if (value == cancelAt) {
        self.cancel();
      } else if (initial != Long.MAX_VALUE) {
        self.request(1);
      }
    });
    this.<Integer>operator().apply(source(publisher)).subscribe(downstream);
    vts.advanceTimeBy(AFTERWARDS);
    return downstream.signals();
  }

  private List<String> expected(String terminal) {
    List<String> expected = new ArrayList<>();
    items().forEach(i -> expected.add(String.valueOf(i)));
    expected.add(terminal);
    return expected;
  }

  @Test
  void reentrantItemsAndCompletionArriveOnceAndInOrder() {
    RecursiveOnRequestPublisher<Integer> publisher = new RecursiveOnRequestPublisher<>(items(), null, 1_000);
    assertThat(run(publisher, 1, -1)).containsExactlyElementsOf(expected("complete"));
  }

  @Test
  void reentrantItemsAndAnErrorArriveOnceAndInOrder() {
    IllegalArgumentException boom = new IllegalArgumentException("boom");
    RecursiveOnRequestPublisher<Integer> publisher = new RecursiveOnRequestPublisher<>(items(), boom, 1_000);
    assertThat(run(publisher, 1, -1)).containsExactlyElementsOf(expected("error: IllegalArgumentException"));
    assertThat(publisher.subscriptions()).as("a caller's own error is not retried").isEqualTo(1);
  }

  @Test
  void boundedRecursionThatTrampolinesDeliversTheSame() {
    RecursiveOnRequestPublisher<Integer> publisher = new RecursiveOnRequestPublisher<>(items(), null, 3);
    assertThat(run(publisher, 1, -1)).containsExactlyElementsOf(expected("complete"));
  }

  @Test
  void everythingRequestedAtOnceIsDeliveredInsideTheRequest() {
    RecursiveOnRequestPublisher<Integer> publisher = new RecursiveOnRequestPublisher<>(items(), null, 1_000);
    assertThat(run(publisher, Long.MAX_VALUE, -1)).containsExactlyElementsOf(expected("complete"));
  }

  @Test
  void aCancelFromInsideAReentrantOnNextStopsEverything() {
    int cancelAt = monoOnly() ? 1 : 5;
    RecursiveOnRequestPublisher<Integer> publisher = new RecursiveOnRequestPublisher<>(items(), null, 1_000);
    List<String> signals = run(publisher, 1, cancelAt);
    assertThat(signals).containsExactlyElementsOf(
        IntStream.rangeClosed(1, cancelAt).mapToObj(String::valueOf).toList());
    assertThat(publisher.cancellations()).isEqualTo(1);
  }
}
