package io.breakwater.internal.retry;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.testing.WhiteboxProbeSubscriber;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import io.breakwater.testing.TckEnvironment;
import reactor.core.publisher.Mono;

/**
 * The Reactive Streams TCK's whitebox rules for the retry's hand-written {@code Mono} subscriber. Like the operator
 * ({@code RetryOperator.MonoRetry}), the test hands the subscriber to its downstream as the downstream's subscription
 * before the TCK's publisher subscribes it. Failures are classified non-retryable, so an error the TCK sends reaches
 * the downstream unchanged instead of starting a new attempt.
 */
public class RetryMonoSubscriberTckTest extends SubscriberWhiteboxVerification<Integer> {

  private final RetryOperator<Integer> operator = new RetryOperator<>(RetryPolicy.builder()
      .name("tck")
      .classifier(FailureClassifier.of(Throwable.class, FailureKind.INVALID_ARGUMENT))
      .meterRegistry(new SimpleMeterRegistry())
      .build(), null);

  public RetryMonoSubscriberTckTest() {
    super(TckEnvironment.forLoadedMachine());
  }

  @Override
  public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
    WhiteboxProbeSubscriber<Integer> downstream = new WhiteboxProbeSubscriber<>(probe);
    RetryMonoSubscriber<Integer> subscriber = new RetryMonoSubscriber<>(downstream, Mono.never(), operator);
    downstream.onSubscribe(subscriber);
    return subscriber;
  }

  @Override
  public Integer createElement(int element) {
    return element;
  }
}
