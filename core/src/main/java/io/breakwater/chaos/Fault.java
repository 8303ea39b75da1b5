package io.breakwater.chaos;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One kind of fault, injected into a seeded share of subscriptions while a switch is on: for testing your own
 * pipelines' resilience, in virtual time or against real dependencies. Made by the factories of {@link Chaos};
 * immutable, so {@link #rate}, {@link #seed}, {@link #enabledWhen} and {@link #scheduler} return copies.
 *
 * <pre>{@code
 * AtomicBoolean chaosOn = new AtomicBoolean(true);
 * Fault<Object> outage = Chaos.error(() -> new HttpStatusException(503)).rate(0.2).seed(42)
 *     .enabledWhen(chaosOn::get);
 * tool.call(args).transformDeferred(Chaos.inject(outage));
 * }</pre>
 *
 * <p><b>Seeded.</b> Whether the n-th subscription is hit depends only on the seed and n, so a run is repeatable;
 * the decision is thread-safe and lock-free. A subscription that is not hit, or any subscription while the switch is
 * off, passes through untouched.
 *
 * @param <T> the item type of the pipelines it applies to
 */
public final class Fault<T> {

  /** What the fault does to one hit subscription. */
  @FunctionalInterface
  interface Effect<T> {
    Publisher<T> apply(Publisher<T> source, boolean mono, Scheduler scheduler);
  }

  private final String name;
  private final Effect<T> effect;
  private final double rate;
  private final long seed;
  private final BooleanSupplier enabled;
  private final Supplier<Scheduler> scheduler;
  private final AtomicLong subscriptions;

  Fault(String name, Effect<T> effect) {
    this(name, effect, 1.0, 0L, () -> true, Schedulers::parallel);
  }

  private Fault(String name, Effect<T> effect, double rate, long seed, BooleanSupplier enabled,
      Supplier<Scheduler> scheduler) {
    this.name = name;
    this.effect = effect;
    this.rate = rate;
    this.seed = seed;
    this.enabled = enabled;
    this.scheduler = scheduler;
    this.subscriptions = new AtomicLong();
  }

  /** The share of subscriptions hit, from 0 (none) to 1 (all, the default). */
  public Fault<T> rate(double rate) {
    if (!(rate >= 0.0 && rate <= 1.0)) {
      throw new IllegalArgumentException("Fault rate is " + rate + ": give a share between 0 and 1, e.g. 0.1");
    }
    return new Fault<>(name, effect, rate, seed, enabled, scheduler);
  }

  /** The seed that decides which subscriptions are hit; default 0. */
  public Fault<T> seed(long seed) {
    return new Fault<>(name, effect, rate, seed, enabled, scheduler);
  }

  /** The runtime switch: the fault is injected only while it answers {@code true}; default always on. */
  public Fault<T> enabledWhen(BooleanSupplier enabled) {
    return new Fault<>(name, effect, rate, seed, Objects.requireNonNull(enabled, "enabled"), scheduler);
  }

  /** Where delays and heartbeats are timed; default {@code Schedulers::parallel}, resolved per subscription. */
  public Fault<T> scheduler(Supplier<Scheduler> scheduler) {
    return new Fault<>(name, effect, rate, seed, enabled, Objects.requireNonNull(scheduler, "scheduler"));
  }

  public String name() {
    return name;
  }

  public double rate() {
    return rate;
  }

  public long seed() {
    return seed;
  }

  /** Whether the next subscription is hit: a pure function of the seed and the subscription's number. */
  boolean hitsNext() {
    if (!enabled.getAsBoolean()) {
      return false;
    }
    long n = subscriptions.getAndIncrement();
    return uniform(seed, n) < rate;
  }

  /** SplitMix64 of (seed, n), as a double in [0, 1). */
  static double uniform(long seed, long n) {
    long z = seed + (n + 1) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    z = z ^ (z >>> 31);
    return (z >>> 11) * 0x1.0p-53;
  }

  Function<Publisher<T>, Publisher<T>> operator() {
    return source -> {
      if (source instanceof Mono<T> mono) {
        return Mono.defer(() -> hitsNext() ? Mono.from(effect.apply(mono, true, scheduler.get())) : mono);
      }
      return Flux.defer(() -> hitsNext() ? effect.apply(source, false, scheduler.get()) : source);
    };
  }

  static <T> Fault<T> of(String name, Effect<T> effect) {
    return new Fault<>(name, effect);
  }

  @Override
  public String toString() {
    return "Fault{" + name + ", rate=" + rate + ", seed=" + seed + "}";
  }

  static void checkDuration(String what, Duration d) {
    if (d.isNegative()) {
      throw new IllegalArgumentException(what + " is " + d + ": give zero or a positive duration");
    }
  }
}
