package io.breakwater.internal.limit;

import io.breakwater.internal.Durations;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.StoreCallBound;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The permits of a concurrency limit kept in a {@link PermitStore} shared by every instance: each take, release and
 * renewal is one atomic step of the store, bounded by {@code operationTimeout}. A permit is leased and its lease
 * renewed every third of it while its call runs, so the permits of an instance that dies come back when their leases
 * run out. A permit whose answer timed out comes back when its lease runs out. When the store does not answer, it is
 * left alone for {@link SharedSettings#STORE_RETRY} ({@link StoreOutage}).
 */
final class SharedPermits implements ConcurrencyStore {

  private static final Logger LOG = Loggers.getLogger(SharedPermits.class);

  private final ConcurrencySettings settings;
  private final SharedSettings shared;
  private final PermitStore store;
  private final StoreOutage outage = new StoreOutage();
  private volatile boolean limitSet;
  private volatile int inFlight;
  private static final AtomicIntegerFieldUpdater<SharedPermits> IN_FLIGHT =
      AtomicIntegerFieldUpdater.newUpdater(SharedPermits.class, "inFlight");
  /** What runs once a permit is back in the store: the engine's queue asks for it. */
  private final Runnable released;

  SharedPermits(ConcurrencySettings settings, SharedSettings shared, PermitStore store, Runnable released) {
    this.settings = settings;
    this.released = released;
    this.shared = shared;
    this.store = store;
  }

  private Scheduler scheduler() {
    return settings.scheduler().get();
  }

  private long now() {
    return scheduler().now(TimeUnit.NANOSECONDS);
  }

  @Override
  public boolean tryAcquire() {
    return false;   // every call asks the store from the queue
  }

  @Override
  public <T> CoreSubscriber<T> holder(CoreSubscriber<? super T> actual, boolean mono) {
    throw new IllegalStateException("a shared permit is taken from the queue, never at once");
  }

  @Override
  public boolean answersAtOnce() {
    return false;
  }

  @Override
  @Nullable
  public String take(Consumer<String> answered, StoreOutage.Unreachable unreachable) {
    // deferred, as every store call here: a store that throws instead of answering with an error fails the request
    Mono<Void> setUp = limitSet ? Mono.empty()
        : Mono.defer(() -> store.limit(settings.fixed())).doOnSuccess(v -> limitSet = true);
    outage.ask(setUp.then(Mono.defer(() -> store.tryAcquire(shared.lease()))).defaultIfEmpty(NO_PERMIT),
        shared.operationTimeout(), scheduler(), answered, unreachable);
    return null;
  }

  @Override
  public void granted(String permit) {
    IN_FLIGHT.incrementAndGet(this);
  }

  @Override
  public <T> Publisher<T> holding(String id, Publisher<? extends T> source, boolean mono) {
    return Flux.defer(() -> {
      Duration lease = shared.lease();
      Duration every = lease.dividedBy(3);
      // One-shot delays, not Flux.interval: cancelling a periodic task may park on the scheduler's queue lock,
      // and a call ends (and stops its renewal) on an event loop
      Disposable renewal = Mono.delay(every, scheduler())
          .then(Mono.defer(() -> StoreCallBound.within(store.renew(id, lease), shared.operationTimeout(),
              scheduler()).onErrorReturn(Boolean.TRUE)))
          .repeat()
          .takeUntil(held -> !held)   // a permit the store no longer holds cannot be renewed
          .subscribe(held -> {
            if (!held) {
              LOG.warn("Concurrency limit '{}': the lease of permit {} ran out while its call ran; the call goes "
                  + "on uncounted by the store", settings.name(), id);
            }
          });
      AtomicBoolean done = new AtomicBoolean();
      Runnable once = () -> {
        if (done.compareAndSet(false, true)) {
          release(id, renewal);
        }
      };
      Flux<T> call = Flux.<T>from(source).doOnTerminate(once).doOnCancel(once);
      // a Mono's value is its end: what follows it downstream finds the permit given back
      return mono ? call.doOnNext(v -> once.run()) : call;
    });
  }

  @Override
  public void release(String id) {
    release(id, null);
  }

  private void release(String id, @Nullable Disposable renewal) {
    try {
      if (renewal != null) {
        renewal.dispose();
      }
    } finally {   // the permit comes back whatever the scheduler does on cancel
      IN_FLIGHT.decrementAndGet(this);
      giveBack(id);
    }
  }

  /** Gives a permit back to the store; the head asks for one once it is back there, not before. */
  @Override
  public void giveBack(String id) {
    StoreCallBound.within(Mono.defer(() -> store.release(id)), shared.operationTimeout(), scheduler()).subscribe(null,
        e -> {
          LOG.debug("Concurrency limit '{}': permit {} not released ({}); it comes back when its lease runs out",
              settings.name(), id, e.toString());
          released.run();
        }, () -> released.run());
  }

  @Override
  public int limit() {
    return settings.fixed();
  }

  @Override
  public int inFlight() {
    return inFlight;
  }

  @Override
  public long pollNanos() {
    return Saturating.nanos(shared.pollInterval());
  }

  @Override
  public void unreachable(@Nullable Throwable error, List<? extends Turn> waiting) {
    // a waiter let through keeps a null permit: its call goes through the local fallback
    outage.letThroughOrRefuse(error, now(), shared.failOpen(), LOG, "Concurrency limit '" + settings.name() + "'",
        settings.name(), store, "calls go through a local limit of " + limit(), waiting);
  }

  @Override
  public String where() {
    return " of " + store;
  }

  @Override
  public String describe(int queued) {
    return "ConcurrencyLimit{" + settings.name() + ", shared " + limit() + " in " + store + ", in flight here "
        + inFlight + ", queued " + queued + ", lease " + Durations.format(shared.lease()) + ", "
        + (shared.failOpen() ? "fails open" : "fails closed") + "}";
  }
}
