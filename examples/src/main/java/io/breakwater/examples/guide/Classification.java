package io.breakwater.examples.guide;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.retry.RetryPolicy;

/** The snippet of {@code docs/failures.md}: teaching Breakwater a client's own exceptions. */
public final class Classification {

  private Classification() {}

  // snippet:domain-payment-errors
  /** The payment provider refused by its own rules: asking again will not change its mind. */
  public static final class PaymentDeclinedException extends RuntimeException {
    public PaymentDeclinedException(String message) {
      super(message);
    }
  }

  /** A vendor SDK's exception that carries the HTTP status it received. */
  public static final class VendorApiException extends RuntimeException {
    private final int status;

    public VendorApiException(int status) {
      super("vendor API answered " + status);
      this.status = status;
    }

    public int status() {
      return status;
    }
  }
  // end-snippet

  /** A retry policy and a breaker that classify the same way. */
  public record Payments(RetryPolicy retry, CircuitBreaker breaker) {}

  public static Payments payments() {
    // snippet:failures-custom-classifier
    FailureClassifier classifier = FailureClassifier.of(PaymentDeclinedException.class, FailureKind.BUSINESS)
        .orElse(e -> e instanceof VendorApiException v ? FailureClassifier.ofStatus(v.status()) : FailureKind.UNKNOWN)
        .orElse(FailureClassifier.defaults());                        // Breakwater's, Reactor's and the JDK's

    RetryPolicy retry = RetryPolicy.builder().name("payments").classifier(classifier).build();
    CircuitBreaker breaker = CircuitBreaker.builder("payments").classifier(classifier).build();
    // end-snippet
    return new Payments(retry, breaker);
  }
}
