package io.breakwater.internal.limit;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Saturating;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Scheduler;

/**
 * One call's turn in a limit's queue. Its state moves once from {@code WAITING} to {@code GRANTED} (the limit gave it
 * its permits), {@code CANCELLED} (the caller left) or {@code EXPIRED} (its wait ran out), from {@code GRANTED}
 * to {@code CLAIMED} (the call was subscribed, and its subscriber now owns the permits) or {@code CANCELLED} (the
 * caller left between the grant and the subscription), and from {@code CLAIMED} to {@code CANCELLED} (the caller left
 * while the call runs: the turn cancels the call itself, see {@link #claimed}). Every move is a compare-and-set, so
 * whichever of the grant, the cancellation and the timer comes first wins, and the permits are given back exactly
 * once.
 */
abstract class Turn {

  static final int WAITING = 0;
  static final int GRANTED = 1;
  static final int CLAIMED = 2;
  static final int CANCELLED = 3;
  static final int EXPIRED = 4;

  /** How long the call may wait: the deadline in force or the limit's {@code maxWait}, whichever ends first. */
  final long waitNanos;
  private final boolean waits;

  private volatile int state;
  private static final AtomicIntegerFieldUpdater<Turn> STATE =
      AtomicIntegerFieldUpdater.newUpdater(Turn.class, "state");

  // set by run(), first thing when the turn is subscribed; grant, refuse and expire come after enqueue.run()
  @SuppressWarnings("NullAway.Init")
  private MonoSink<Void> sink;
  @Nullable
  private volatile Disposable timer;
  /** The deadline in force for the caller, which may be what bounds the wait. */
  @Nullable
  private Deadline deadline;
  /** The running call's subscription, once it is subscribed; cancelled by a caller that leaves after the claim. */
  @Nullable
  private volatile Subscription call;

  /** {@code mayQueue}: whether the limit queues calls at all ({@code maxQueue} above zero). */
  Turn(long waitNanos, boolean mayQueue) {
    this.waitNanos = waitNanos;
    this.waits = waitNanos > 0 && mayQueue;
  }

  /** Whether the call may wait for its turn, or must be refused when its permits are not there at once. */
  final boolean waits() {
    return waits;
  }

  /**
   * Takes the turn out of its queue, by whoever moved it out of {@code WAITING} but the limit; called again when the
   * caller left while the turn was being queued, so taking out a turn that is not queued does nothing.
   */
  abstract void leaveQueue();

  /** Gives back the permits of a turn that was granted but never claimed. */
  abstract void returnGrant();

  /** The error for a turn whose wait ran out. */
  abstract Throwable expired();

  /** The meters of the turn's limit: it counts the waits and refusals. */
  abstract LimitMetrics metrics();

  /**
   * Subscribes {@code actual} to the call once its turn comes: {@code enqueue} puts the turn in the queue (or grants
   * or refuses it at once, through {@link #grantNow} and {@link #refuse}); {@code permitted} is the call, subscribed
   * with the permits held. Cancelling {@code actual} at any point leaves the queue or gives the permits back.
   */
  final <T> void run(CoreSubscriber<? super T> actual, Runnable enqueue, Supplier<Publisher<T>> permitted) {
    deadline = actual.currentContext().getOrDefault(ContextKeys.DEADLINE, null);
    Mono.<Void>create(s -> {
          sink = s;
          enqueue.run();
        })
        .thenMany(Flux.defer(() -> STATE.compareAndSet(this, GRANTED, CLAIMED)
            ? Flux.from(permitted.get()).doOnSubscribe(this::claimed) : Flux.empty()))
        .doFinally(signal -> {
          if (signal == SignalType.CANCEL) {
            abandon();
          }
        })
        .subscribe(actual);
  }

  /**
   * Starts the wait's timer once the turn is queued: after {@link #waitNanos}, a turn still waiting expires. A turn
   * whose caller left while it was being queued (before it was in the queue to leave) leaves it now.
   */
  final void expireAfter(Scheduler scheduler) {
    if (state == CANCELLED) {
      leaveQueue();
      return;
    }
    metrics().waited();
    Disposable t = scheduler.schedule(this::expire, Saturating.delayNanos(waitNanos), TimeUnit.NANOSECONDS);
    timer = t;
    int now = state;
    if (now != WAITING) {
      t.dispose();
      if (now == CANCELLED) {
        leaveQueue();
      }
    }
  }

  /**
   * Moves a waiting turn to {@code GRANTED}; the caller then calls {@link #deliver()} outside its lock. Whatever
   * {@link #returnGrant()} needs (the permit's id, the store's marks) must be set <em>before</em> this: the caller
   * may leave the moment it succeeds, on another thread, and give the grant back at once.
   */
  final boolean grant() {
    return STATE.compareAndSet(this, WAITING, GRANTED);
  }

  /** Runs the call of a granted turn. */
  final void deliver() {
    disposeTimer();
    sink.success();
  }

  /**
   * Grants a turn that never had to wait (it found its permits while being queued) and runs its call; gives the
   * permits back if its caller left while it was being queued.
   */
  final void grantNow() {
    if (STATE.compareAndSet(this, WAITING, GRANTED)) {
      sink.success();
    } else {
      returnGrant();
    }
  }

  /** Refuses a turn that was never queued, unless its caller left meanwhile. */
  final void refuse(Throwable error) {
    if (STATE.compareAndSet(this, WAITING, EXPIRED)) {
      metrics().refused(error);
      sink.error(error);
    }
  }

  /** Refuses a waiting turn that the limit took out of its queue. */
  final void fail(Throwable error) {
    if (STATE.compareAndSet(this, WAITING, EXPIRED)) {
      disposeTimer();
      metrics().refused(error);
      sink.error(error);
    }
  }

  final boolean isWaiting() {
    return state == WAITING;
  }

  /** Whether the turn was granted (and maybe claimed) or refused already: nothing is left to wait for. */
  final boolean isDecided() {
    int now = state;
    return now == GRANTED || now == CLAIMED || now == EXPIRED;
  }

  private void expire() {
    if (STATE.compareAndSet(this, WAITING, EXPIRED)) {
      leaveQueue();
      Throwable error = expired();
      metrics().refused(error);
      sink.error(outOfTime(error));
    }
  }

  /**
   * A wait that the deadline ended (no time left when it ran out) is the deadline's {@code TimeoutException}, with
   * the limit's refusal as a suppressed exception; one that the limit's own {@code maxWait} ended is the refusal.
   */
  private Throwable outOfTime(Throwable refusal) {
    Deadline d = deadline;
    if (d == null || d.remainingNanos() > 0) {
      return refusal;
    }
    DeadlineExceededException exceeded = new DeadlineExceededException(d.name(), d.budget(), d.elapsed(),
        "it ran out while the call waited in a limit's queue (" + refusal.getMessage() + ")");
    exceeded.addSuppressed(refusal);
    return exceeded;
  }

  /**
   * The call of a claimed turn is subscribed. Reactor's {@code thenMany} can lose a cancellation that races with the
   * subscription of its second source (its concat checks for a cancellation, then takes the new subscription, with
   * nothing between the two that a cancel on another thread sees), and the call would then run on, holding its
   * permits, for a caller that left. So the turn cancels the call itself: whichever of this and {@link #abandon}
   * comes second sees the other's write and cancels it (twice at worst, which a subscription ignores).
   */
  private void claimed(Subscription s) {
    call = s;
    if (state == CANCELLED) {
      s.cancel();
    }
  }

  private void abandon() {
    if (STATE.compareAndSet(this, WAITING, CANCELLED)) {
      disposeTimer();
      leaveQueue();
    } else if (STATE.compareAndSet(this, GRANTED, CANCELLED)) {
      returnGrant();
    } else if (STATE.compareAndSet(this, CLAIMED, CANCELLED)) {
      Subscription s = call;
      if (s != null) {
        s.cancel();
      }
    }
  }

  private void disposeTimer() {
    Disposable t = timer;
    if (t != null) {
      t.dispose();
    }
  }
}
