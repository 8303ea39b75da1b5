package io.breakwater.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

class BlockingCallTest {

  private final List<Throwable> dropped = new CopyOnWriteArrayList<>();

  @BeforeEach
  void recordDroppedErrors() {
    Hooks.onErrorDropped(dropped::add);
  }

  @AfterEach
  void resetHooks() {
    Hooks.resetOnErrorDropped();
  }

  @Test
  void aValueOrAFailureOfTheBlockingCallReachesTheSubscriber() {
    StepVerifier.create(BlockingCall.on(Schedulers.boundedElastic(), () -> "ok")).expectNext("ok").verifyComplete();
    StepVerifier.create(BlockingCall.on(Schedulers.boundedElastic(), () -> {
      throw new IllegalStateException("boom");
    })).verifyErrorMessage("boom");
    StepVerifier.create(BlockingCall.on(Schedulers.boundedElastic(), () -> null)).verifyComplete();
  }

  @Test
  void aCallThatFailsAfterItsSubscriberLeftIsNotReportedAsADroppedError() throws InterruptedException {
    CountDownLatch ended = new CountDownLatch(1);
    Sinks.Empty<Void> started = Sinks.empty();
    StepVerifier.create(BlockingCall.on(Schedulers.boundedElastic(), () -> {
      started.tryEmitEmpty();
      try {
        Thread.sleep(300);   // interrupted by the cancellation, or not: it fails either way
        throw new IllegalStateException("503 after the caller left");
      } finally {
        ended.countDown();
      }
    }).timeout(started.asMono().then(Mono.delay(Duration.ofMillis(50)))))   // cut once it runs
        .expectError(java.util.concurrent.TimeoutException.class)
        .verify(Duration.ofSeconds(5));
    assertThat(ended.await(5, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(100);   // let the failure travel to where it would be dropped
    assertThat(dropped).isEmpty();
  }

  @Test
  void aClientDeafToInterruptsThatFailsLateIsNotReportedAsADroppedError() throws InterruptedException {
    CountDownLatch answered = new CountDownLatch(1);
    Sinks.Empty<Void> started = Sinks.empty();
    StepVerifier.create(BlockingCall.on(Schedulers.boundedElastic(), () -> {
      started.tryEmitEmpty();
      long until = System.nanoTime() + 300_000_000L;   // a socket read: deaf to interrupts
      while (System.nanoTime() < until) {
        Thread.onSpinWait();
      }
      answered.countDown();
      throw new IllegalStateException("503 after the caller left");
    }).timeout(started.asMono().then(Mono.delay(Duration.ofMillis(50)))))   // cut once it runs
        .expectError(java.util.concurrent.TimeoutException.class)
        .verify(Duration.ofSeconds(5));
    assertThat(answered.await(5, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(100);
    assertThat(dropped).isEmpty();
  }

  @Test
  void aCallRefusedByItsSchedulerFails() {
    var disposed = Schedulers.newSingle("disposed");
    disposed.dispose();
    StepVerifier.create(BlockingCall.on(disposed, () -> "never"))
        .expectError(java.util.concurrent.RejectedExecutionException.class)
        .verify(Duration.ofSeconds(5));
  }
}
