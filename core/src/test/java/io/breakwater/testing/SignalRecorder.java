package io.breakwater.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

/**
 * A downstream that records every signal as text ({@code "1"}, {@code "complete"}, {@code "error: <class>"}),
 * requests {@code initial} items at subscription (none when 0) and runs a reaction inside each {@code onNext}, so
 * tests can request, cancel or move time from inside delivery.
 */
public final class SignalRecorder<T> extends BaseSubscriber<T> {

  private final List<String> signals = new CopyOnWriteArrayList<>();
  private final long initial;
  private final BiConsumer<SignalRecorder<T>, T> onNext;

  public SignalRecorder(long initial, BiConsumer<SignalRecorder<T>, T> onNext) {
    this.initial = initial;
    this.onNext = onNext;
  }

  public List<String> signals() {
    return signals;
  }

  @Override
  protected void hookOnSubscribe(Subscription subscription) {
    if (initial > 0) {
      request(initial);
    }
  }

  @Override
  protected void hookOnNext(T value) {
    signals.add(String.valueOf(value));
    onNext.accept(this, value);
  }

  @Override
  protected void hookOnComplete() {
    signals.add("complete");
  }

  @Override
  protected void hookOnError(Throwable t) {
    signals.add("error: " + t.getClass().getSimpleName());
  }
}
