package io.breakwater.internal.deadline;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Operators;

/** The arming gate that the timed subscribers share: the second of its two sides arms, once. */
class GatedTimerTest {

  /** A gated timer that counts its arming. */
  private static final class Counting extends GatedTimer<Object> {
    final AtomicInteger armed = new AtomicInteger();

    Counting() {
      super(new BaseSubscriber<>() {});
    }

    @Override
    protected void arm() {
      armed.incrementAndGet();
    }

    @Override
    protected void releaseTimer() {
    }

    boolean subscribing() {
      return subscribingHere();
    }
  }

  @Test
  void anOnSubscribeInsideTheSubscriptionLeavesTheArmingToTheSourceReturning() {
    Counting timer = new Counting();
    timer.onSubscribe(Operators.emptySubscription());
    assertThat(timer.armed).as("the call may still end during its subscription").hasValue(0);
    timer.sourceReturned();
    assertThat(timer.armed).hasValue(1);
  }

  @Test
  void anOnSubscribeAfterTheSourceReturnedArmsOnTheSubscribingThreadToo() {
    Counting timer = new Counting();
    timer.sourceReturned();
    assertThat(timer.armed).hasValue(0);
    timer.onSubscribe(Operators.emptySubscription());
    assertThat(timer.armed).hasValue(1);
  }

  @Test
  void anOnSubscribeFromAnotherThreadRacingTheSourceReturningArmsExactlyOnce() throws InterruptedException {
    for (int round = 0; round < 500; round++) {
      Counting timer = new Counting();
      CountDownLatch go = new CountDownLatch(1);
      Thread other = new Thread(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        timer.onSubscribe(Operators.emptySubscription());
      });
      other.start();
      go.countDown();
      timer.sourceReturned();
      other.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(timer.armed).as("round %d", round).hasValue(1);
    }
  }

  @Test
  void onlyTheSubscribingThreadIsSubscribingAndOnlyUntilTheSourceReturns() throws InterruptedException {
    Counting timer = new Counting();
    assertThat(timer.subscribing()).isTrue();
    AtomicBoolean elsewhere = new AtomicBoolean(true);
    Thread other = new Thread(() -> elsewhere.set(timer.subscribing()));
    other.start();
    other.join();
    assertThat(elsewhere).isFalse();
    timer.onSubscribe(Operators.emptySubscription());
    assertThat(timer.subscribing()).isTrue();
    timer.sourceReturned();
    assertThat(timer.subscribing()).isFalse();
  }
}
