package io.breakwater.internal.limit;

import io.breakwater.deadline.Deadline;
import io.breakwater.limit.LimitExceededException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * The queue side of a limit's engine, written once for both kinds: calls that could not take their permits at once
 * wait in it, and its head asks the store for its permits, one request at a time.
 *
 * <ul>
 *   <li>A waiting call is queued ({@link #admit}) before its head asks, under this object's monitor; a call that
 *       may not be queued is refused without asking.</li>
 *   <li>{@link #pump()} asks for the head's permits unless a request is in flight; a pump that comes meanwhile (a
 *       permit came back, a call joined or left) is not lost: the request in flight asks again when it is answered,
 *       if its head still waits. An in-memory store answers at once, and the pump goes on while heads run.</li>
 *   <li>One timer at a time asks again when the store said when the head's permits will be there.</li>
 *   <li>When the store does not answer, every waiting call leaves the queue for the store's outage policy.</li>
 * </ul>
 *
 * @param <W> a waiting call
 * @param <A> the store's answer to a request
 */
abstract class LimitQueue<W extends Turn, A> {

  /** Whether the head's request to the store is in flight, and whether a pump came meanwhile; guarded by this. */
  private boolean asking;
  private boolean missed;
  @Nullable
  private Disposable poll;

  abstract Scheduler scheduler();

  /** How long a call with {@code ctx} may wait: {@code maxWaitNanos}, or less if the deadline in force leaves less. */
  static long waitNanos(ContextView ctx, long maxWaitNanos) {
    Deadline deadline = Deadline.from(ctx).orElse(null);
    return deadline == null ? maxWaitNanos : Math.min(maxWaitNanos, deadline.remainingNanos());
  }

  /** Queues {@code waiter}, or the refusal that says why not. Guarded by {@code this}. */
  @Nullable
  abstract LimitExceededException admit(W waiter);

  /** The first call of the queue that still waits, after taking out those that do not. Guarded by {@code this}. */
  @Nullable
  abstract W first();

  /** Takes every waiting call out of the queue. Guarded by {@code this}. */
  abstract List<W> drain();

  /**
   * Asks the store for {@code head}'s permits: the answer, when the store gives it at once, or {@code null}, and then
   * {@code later} or {@code unreachable} when it does.
   */
  @Nullable
  abstract A ask(W head, Consumer<A> later, StoreOutage.Unreachable unreachable);

  /**
   * The store's answer for {@code head}; the implementation starts with {@link #answerCame()} under the monitor.
   * Whether to ask for the next head now.
   */
  abstract boolean answered(W head, A answer);

  /** The store did not answer: each of {@code waiting}, out of the queue, goes to the fallback or is refused. */
  abstract void unreachable(@Nullable Throwable error, List<W> waiting);

  /**
   * Puts {@code waiter} in the queue, or refuses it; then its turn may come at once. A waiter still waiting after
   * that expires after its wait.
   */
  final void enqueue(W waiter) {
    LimitExceededException refusal;
    synchronized (this) {
      refusal = admit(waiter);
    }
    if (refusal != null) {
      waiter.refuse(refusal);
      return;
    }
    pump();   // an in-memory store grants the head at once when its permits are there
    if (waiter.waits() && !waiter.isDecided()) {
      waiter.expireAfter(scheduler());
    }
  }

  /** Asks the store for the head's permits, as long as it answers at once and the head runs. */
  final void pump() {
    for (;;) {
      W head = nextToAsk();
      if (head == null) {
        return;
      }
      A answer = ask(head, later -> {
        if (answered(head, later)) {
          pump();
        }
      }, this::storeUnreachable);
      if (answer == null || !answered(head, answer)) {
        return;
      }
    }
  }

  @Nullable
  private synchronized W nextToAsk() {
    if (asking) {
      missed = true;
      return null;
    }
    W head = first();
    if (poll != null) {
      poll.dispose();
      poll = null;
    }
    if (head != null) {
      asking = true;
      missed = false;
    }
    return head;
  }

  /** The head's request was answered: whether a pump came while it was in flight. Guarded by {@code this}. */
  final boolean answerCame() {
    asking = false;
    return missed;
  }

  /** Asks again for the head in {@code nanos}, unless a timer will already. Guarded by {@code this}. */
  final void askAgainIn(long nanos) {
    if (poll == null) {
      poll = scheduler().schedule(() -> {
        synchronized (this) {
          poll = null;
        }
        pump();
      }, nanos, TimeUnit.NANOSECONDS);
    }
  }

  private void storeUnreachable(@Nullable Throwable error) {
    List<W> waiting;
    synchronized (this) {
      asking = false;
      waiting = drain();
    }
    unreachable(error, waiting);
  }
}
