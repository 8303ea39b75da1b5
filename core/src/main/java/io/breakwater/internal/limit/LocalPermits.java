package io.breakwater.internal.limit;

import io.breakwater.internal.Durations;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * The in-memory permits of a concurrency limit: a permit is one atomic increment of {@code inFlight} below the limit,
 * which an adaptive limit moves ({@link VegasLimit}). A permit given back wakes the engine's queue, after
 * {@code inFlight} went down: a waiting call counts itself queued before it looks at {@code inFlight}, so a permit is
 * never left free while a call waits for it.
 */
final class LocalPermits implements ConcurrencyStore {

  /** The id of every in-memory permit. */
  static final String PERMIT = "local";

  private final ConcurrencySettings settings;
  private final Supplier<Scheduler> clock;
  @Nullable
  private final VegasLimit adaptive;
  private volatile int limit;
  private volatile int inFlight;
  private static final AtomicIntegerFieldUpdater<LocalPermits> IN_FLIGHT =
      AtomicIntegerFieldUpdater.newUpdater(LocalPermits.class, "inFlight");
  /** What runs after a permit came back: the engine's queue looks at it. */
  private final Runnable released;

  LocalPermits(ConcurrencySettings settings, Runnable released) {
    this.settings = settings;
    this.released = released;
    this.clock = settings.scheduler();
    this.adaptive = settings.adaptive() == null ? null : new VegasLimit(settings.adaptive());
    this.limit = settings.initialLimit();
  }

  @Override
  public boolean tryAcquire() {
    for (;;) {
      int n = inFlight;
      if (n >= limit) {
        return false;
      }
      if (IN_FLIGHT.compareAndSet(this, n, n + 1)) {
        return true;
      }
    }
  }

  @Override
  public <T> CoreSubscriber<T> holder(CoreSubscriber<? super T> actual, boolean mono) {
    return adaptive == null ? new PermitSubscriber<>(actual, this, mono)
        : new AdaptivePermitSubscriber<>(actual, this, mono);
  }

  @Override
  public boolean answersAtOnce() {
    return true;
  }

  @Override
  public String take(Consumer<String> answered, StoreOutage.Unreachable unreachable) {
    return tryAcquire() ? PERMIT : NO_PERMIT;
  }

  @Override
  public void granted(String permit) {}

  @Override
  public <T> Publisher<T> holding(String permit, Publisher<? extends T> source, boolean mono) {
    return subscriber -> source.subscribe(holder(Operators.toCoreSubscriber(subscriber), mono));
  }

  @Override
  public void release(String permit) {
    release();
  }

  @Override
  public void giveBack(String permit) {
    release();
  }

  /** Gives a permit back; the first waiting call then takes it, before any newcomer. */
  void release() {
    IN_FLIGHT.decrementAndGet(this);
    released.run();
  }

  /** Gives a permit back and tells the adaptive limit how the call went. */
  void release(long startNanos, long endNanos, boolean drop) {
    int inFlightThen = inFlight;
    IN_FLIGHT.decrementAndGet(this);
    int changed = Objects.requireNonNull(adaptive, "only an adaptive limit samples")
        .sample(startNanos, endNanos, drop, inFlightThen);
    if (changed > 0) {
      limit = changed;
    }
    released.run();
  }

  boolean isDrop(Throwable error) {
    return VegasLimit.isDrop(settings.classifier().classify(error));
  }

  long now() {
    return clock.get().now(TimeUnit.NANOSECONDS);
  }

  String name() {
    return settings.name();
  }

  @Override
  public int limit() {
    return limit;
  }

  @Override
  public int inFlight() {
    return inFlight;
  }

  @Override
  public long pollNanos() {
    return Long.MAX_VALUE;
  }

  @Override
  public void unreachable(@Nullable Throwable error, List<? extends Turn> waiting) {
    throw new IllegalStateException("memory always answers", error);
  }

  @Override
  public String where() {
    return "";
  }

  @Override
  public String describe(int queued) {
    return "ConcurrencyLimit{" + settings.name() + ", " + (adaptive == null ? "fixed " : "adaptive ") + limit
        + ", in flight " + inFlight + ", queued " + queued + ", maxWait "
        + Durations.format(Duration.ofNanos(settings.maxWaitNanos()))
        + ", maxQueue " + settings.maxQueue() + "}";
  }
}
