package io.breakwater.internal.retry;

import static io.breakwater.Breakwater.retryWithBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.test.publisher.PublisherProbe;

/** The review's suspicions about the retry's {@code Mono} subscriber, each proven by a test. */
class RetryMonoSubscriberTest {

  static final RetryPolicy POLICY = RetryPolicy.builder().name("suspicions")
      .meterRegistry(new SimpleMeterRegistry()).build();

  @AfterEach
  void resetHooks() {
    Hooks.resetOnErrorDropped();
  }

  /** Was: the source was subscribed although the subscriber had already left (a {@code defer} ran its call). */
  @Test
  void aCancelInsideOnSubscribeSubscribesNothingUpstream() {
    PublisherProbe<String> source = PublisherProbe.of(Mono.just("made a call"));
    source.mono().transformDeferred(retryWithBudget(POLICY)).subscribe(new BaseSubscriber<String>() {
      @Override
      protected void hookOnSubscribe(Subscription subscription) {
        cancel();
      }
    });
    assertThat(source.wasSubscribed()).isFalse();
  }

  /** Was: an error that arrived after the cancel vanished, instead of reaching {@code Hooks.onErrorDropped}. */
  @Test
  void anErrorAfterTheCancelGoesToOnErrorDropped() {
    List<Throwable> dropped = new CopyOnWriteArrayList<>();
    Hooks.onErrorDropped(dropped::add);
    AtomicReference<CoreSubscriber<? super String>> upstream = new AtomicReference<>();
    Mono<String> source = new Mono<>() {
      @Override
      public void subscribe(CoreSubscriber<? super String> actual) {
        upstream.set(actual);
        actual.onSubscribe(new Subscription() {
          @Override
          public void request(long n) {}

          @Override
          public void cancel() {}
        });
      }
    };
    BaseSubscriber<String> downstream = new BaseSubscriber<>() {};
    source.transformDeferred(retryWithBudget(POLICY)).subscribe(downstream);
    downstream.cancel();
    IllegalStateException late = new IllegalStateException("connection closed by the cancel");
    upstream.get().onError(late);
    assertThat(dropped).containsExactly(late);
  }
}
