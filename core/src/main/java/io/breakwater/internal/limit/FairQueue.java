package io.breakwater.internal.limit;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.PriorityQueue;
import org.jspecify.annotations.Nullable;

/**
 * Start-time fair queuing (Goyal, Vin and Cheng, 1996) of waiting calls, one flow per task. A call that joins gets
 * the start tag {@code max(virtualTime, finish of its flow's previous call)} and its flow's finish moves on by the
 * call's cost; calls run in order of start tag (then arrival), and the virtual time is the start tag of the last call
 * that ran. A flow that queued many calls has pushed its own tags far ahead, so another flow's call runs first. When
 * the queue empties, the flows are forgotten. It counts each task's waiting calls ({@link TaskShares}), so that its
 * owner can cap a task's share of the queue. Not thread-safe: its owner guards it.
 */
final class FairQueue<E> {

  /** A call in the queue. */
  static final class Node<E> {
    final E call;
    /** The permits the call needs: one request and this many tokens. */
    final long tokens;
    double start;
    double finish;
    @Nullable Object flow;
    long arrival;

    Node(E call, long tokens) {
      this.call = call;
      this.tokens = tokens;
    }
  }

  private static final int FORGET_ABOVE = 4096;

  private final PriorityQueue<Node<E>> queue = new PriorityQueue<>((a, b) -> a.start != b.start
      ? Double.compare(a.start, b.start) : Long.compare(a.arrival, b.arrival));
  private final Map<Object, Double> finish = new HashMap<>();
  private final TaskShares shares;
  private double virtualTime;
  private long arrivals;

  FairQueue(int maxPerTask) {
    this.shares = new TaskShares(maxPerTask);
  }

  int size() {
    return queue.size();
  }

  /** Whether the calls of {@code flow} (a task) already hold the task's share of the queue. */
  boolean holdsItsShare(Object flow) {
    return shares.full(flow);
  }

  boolean isEmpty() {
    return queue.isEmpty();
  }

  @Nullable
  Node<E> peek() {
    return queue.peek();
  }

  /** The start tag a call of {@code flow} would get now. */
  double startTag(Object flow) {
    Double last = finish.get(flow);
    return last == null ? virtualTime : Math.max(virtualTime, last);
  }

  /**
   * The permits needed by the calls that would run before a call with start tag {@code start} joining now, that call
   * included: {@code [requests, tokens]}.
   */
  double[] demandUpTo(double start, long tokens) {
    double requests = 1;
    double total = tokens;
    for (Node<E> n : queue) {
      if (n.start <= start) {
        requests++;
        total += n.tokens;
      }
    }
    return new double[] {requests, total};
  }

  void add(Node<E> node, Object flow, double start, double cost) {
    node.start = start;
    node.finish = start + cost;
    node.flow = flow;
    node.arrival = arrivals++;
    finish.put(flow, node.finish);
    queue.add(node);
    shares.joined(flow);
    if (finish.size() > FORGET_ABOVE) {
      Iterator<Double> it = finish.values().iterator();
      while (it.hasNext()) {
        if (it.next() <= virtualTime) {
          it.remove();
        }
      }
    }
  }

  /** Takes the next call out to run it. */
  Node<E> poll() {
    Node<E> n = queue.poll();
    left(n);
    virtualTime = Math.max(virtualTime, n.start);
    forgetIfIdle();
    return n;
  }

  /** Takes a call out to run it, wherever it stands in the queue. */
  void take(Node<E> node) {
    if (queue.remove(node)) {
      left(node);
    }
    virtualTime = Math.max(virtualTime, node.start);
    forgetIfIdle();
  }

  /**
   * Takes a call out that leaves without running. When it was its flow's last call, its flow's finish goes back to
   * where it was before the call joined: a call that never ran costs its flow nothing.
   */
  void remove(Node<E> node) {
    if (queue.remove(node) && node.flow != null) {
      left(node);
      Double last = finish.get(node.flow);
      if (last != null && last == node.finish) {
        finish.put(node.flow, node.start);
      }
    }
    forgetIfIdle();
  }

  private void left(Node<E> node) {
    if (node.flow != null) {
      shares.left(node.flow);
    }
  }

  private void forgetIfIdle() {
    if (queue.isEmpty()) {
      finish.clear();
      virtualTime = 0;
    }
  }
}
