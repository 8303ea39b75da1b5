package io.breakwater.internal.breaker;

import io.breakwater.breaker.StateTransition;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Delivers transitions one at a time and in generation order, whichever threads made them. Threads that win a
 * transition's compare-and-set may reach this dispatcher out of order; transitions are held until their
 * predecessor has been delivered. Lock-free: whoever finds the dispatcher idle drains it.
 */
final class TransitionDispatcher {

  /** A transition and its generation; {@code publish} when made here (not applied from another instance). */
  record Pending(long gen, StateTransition transition, boolean publish) {}

  private final Queue<Pending> submitted = new ConcurrentLinkedQueue<>();
  private final AtomicInteger wip = new AtomicInteger();
  private final Consumer<Pending> deliver;
  /** Touched only by the draining thread. */
  private final PriorityQueue<Pending> held = new PriorityQueue<>(Comparator.comparingLong(Pending::gen));
  private long nextGen;

  TransitionDispatcher(long firstGen, Consumer<Pending> deliver) {
    this.nextGen = firstGen;
    this.deliver = deliver;
  }

  void submit(Pending pending) {
    submitted.offer(pending);
    if (wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      for (Pending p; (p = submitted.poll()) != null; ) {
        held.add(p);
      }
      while (!held.isEmpty() && held.peek().gen() == nextGen) {
        nextGen++;
        deliver.accept(held.poll());
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }
}
