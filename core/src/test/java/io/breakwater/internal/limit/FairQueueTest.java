package io.breakwater.internal.limit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Start-time fair queuing as {@link FairQueue}'s javadoc states it: a call's start tag is the later of the virtual
 * time and its flow's last finish; calls run by start tag, then arrival; the queue forgets the flows when it empties,
 * and forgets idle flows' tags when it remembers too many.
 */
class FairQueueTest {

  private final FairQueue<String> queue = new FairQueue<>(Integer.MAX_VALUE);

  private FairQueue.Node<String> join(String call, Object flow, long tokens, double cost) {
    FairQueue.Node<String> node = new FairQueue.Node<>(call, tokens);
    queue.add(node, flow, queue.startTag(flow), cost);
    return node;
  }

  private List<String> drain() {
    List<String> order = new ArrayList<>();
    while (!queue.isEmpty()) {
      order.add(queue.poll().call);
    }
    return order;
  }

  @Test
  void aCallThatLeavesWithoutRunningGivesItsFlowItsCostBack() {
    join("b1", "B", 0, 1);   // keeps the queue busy, so that the flows are remembered
    FairQueue.Node<String> cancelled = join("a1", "A", 0, 5);
    queue.remove(cancelled);
    assertThat(queue.startTag("A")).as("A's next start tag: as if the call never joined").isZero();
    join("a2", "A", 0, 1);
    join("c1", "C", 0, 1);
    assertThat(drain()).as("A is not pushed back by the call that left").containsExactly("b1", "a2", "c1");
  }

  @Test
  void callsWithTheSameStartTagRunInArrivalOrder() {
    join("a", "A", 0, 1);
    join("b", "B", 0, 1);
    join("c", "C", 0, 1);
    join("d", "D", 0, 1);
    assertThat(drain()).containsExactly("a", "b", "c", "d");
  }

  @Test
  void aFlowThatQueuedManyCallsLetsAnotherFlowsCallRunFirst() {
    join("a1", "A", 0, 1);
    join("a2", "A", 0, 1);
    join("a3", "A", 0, 1);
    join("b1", "B", 0, 1);
    assertThat(drain()).containsExactly("a1", "b1", "a2", "a3");
  }

  @Test
  void theDemandBeforeACallCountsEveryQueuedCallThatStartsNoLaterThanIt() {
    join("a1", "A", 100, 1);
    join("a2", "A", 200, 1);
    join("b1", "B", 40, 1);
    // a call of C joining now starts at 0, with a1 and b1 (start 0), before a2 (start 1)
    assertThat(queue.demandUpTo(queue.startTag("C"), 10)).containsExactly(3, 150);
    assertThat(queue.demandUpTo(queue.startTag("A"), 10)).as("A's next starts at 2: after all three")
        .containsExactly(4, 350);
  }

  @Test
  void anIdleQueueForgetsWhatEachFlowHad() {
    for (int i = 0; i < 3; i++) {
      join("a" + i, "A", 0, 1);
    }
    drain();
    join("a", "A", 0, 1);
    join("b", "B", 0, 1);
    assertThat(drain()).as("after the queue emptied by polls, A starts even with B").containsExactly("a", "b");

    FairQueue.Node<String> taken = join("a", "A", 0, 5);
    queue.take(taken);
    join("a", "A", 0, 1);
    join("b", "B", 0, 1);
    assertThat(drain()).as("emptied by a take").containsExactly("a", "b");

    FairQueue.Node<String> left = join("a", "A", 0, 5);
    queue.remove(left);
    join("a", "A", 0, 1);
    join("b", "B", 0, 1);
    assertThat(drain()).as("emptied by a call that left").containsExactly("a", "b");
  }

  @Test
  void rememberingTooManyFlowsForgetsOnlyThoseThatAreIdle() {
    join("busy", "busy", 0, 1_000);   // its next call starts at 1000
    for (int i = 0; i <= 4096; i++) {
      join("once", "flow" + i, 0, 0);   // finish at the virtual time: idle
    }
    assertThat(queue.startTag("busy")).as("not forgotten").isEqualTo(1_000);
  }
}
