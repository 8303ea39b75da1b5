package io.breakwater.failure;

import java.util.Objects;

/**
 * Maps a failure to its {@link FailureKind}. Retries, breakers, fallbacks and failure feedback all ask one.
 *
 * <p>{@link #defaults()} understands the JDK's, Reactor's and Reactor Netty's exceptions as well as Breakwater's own
 * and {@link HttpStatusException}. Add your own rules in front of it; a classifier that answers
 * {@link FailureKind#UNKNOWN} hands over to the next:
 *
 * <pre>{@code
 * FailureClassifier classifier = FailureClassifier.of(PaymentDeclinedException.class, FailureKind.BUSINESS)
 *     .orElse(e -> e instanceof VendorApiException v ? FailureClassifier.ofStatus(v.status()) : FailureKind.UNKNOWN)
 *     .orElse(FailureClassifier.defaults());
 * }</pre>
 *
 * <p>A classifier decides the kind only. A retry honours {@code Retry-After} when the failure (or one of its causes)
 * is an {@link HttpStatusException}, which carries the response headers: map an HTTP client's error responses to it
 * rather than classifying the client's own exception by status.
 *
 * <p>Implementations must be thread-safe and fast: they run on every failure, on Reactor's threads.
 */
@FunctionalInterface
public interface FailureClassifier {

  /** The kind of {@code failure}; never {@code null}, {@link FailureKind#UNKNOWN} when this classifier can't tell. */
  FailureKind classify(Throwable failure);

  /** This classifier, handing over to {@code next} where it answers {@link FailureKind#UNKNOWN}. */
  default FailureClassifier orElse(FailureClassifier next) {
    Objects.requireNonNull(next, "next");
    return failure -> {
      FailureKind kind = classify(failure);
      return kind == FailureKind.UNKNOWN ? next.classify(failure) : kind;
    };
  }

  /** Classifies every failure of {@code type} (and its subtypes) as {@code kind}, and nothing else. */
  static FailureClassifier of(Class<? extends Throwable> type, FailureKind kind) {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(kind, "kind");
    return failure -> type.isInstance(failure) ? kind : FailureKind.UNKNOWN;
  }

  /**
   * The classifier Breakwater uses unless told otherwise: Breakwater's exceptions by their own kind; HTTP statuses by
   * {@link #ofStatus}; timeouts as {@link FailureKind#TIMEOUT}; connect errors, resets and premature closes as
   * {@link FailureKind#CONNECTION}; {@link IllegalArgumentException} as {@link FailureKind#INVALID_ARGUMENT};
   * {@link Error} as {@link FailureKind#FATAL}; otherwise the cause decides, and failing that
   * {@link FailureKind#UNKNOWN}.
   */
  static FailureClassifier defaults() {
    return io.breakwater.internal.failure.DefaultFailureClassifier.INSTANCE;
  }

  /**
   * The kind of an HTTP error status: 408 {@link FailureKind#TIMEOUT}; 429 {@link FailureKind#RATE_LIMITED}; 5xx
   * {@link FailureKind#SERVER_ERROR}; 400 and 422 {@link FailureKind#INVALID_ARGUMENT}; other 4xx
   * {@link FailureKind#CLIENT_ERROR}; anything else {@link FailureKind#UNKNOWN}.
   */
  static FailureKind ofStatus(int status) {
    if (status == 408) {
      return FailureKind.TIMEOUT;
    }
    if (status == 429) {
      return FailureKind.RATE_LIMITED;
    }
    if (status == 400 || status == 422) {
      return FailureKind.INVALID_ARGUMENT;
    }
    if (status >= 400 && status < 500) {
      return FailureKind.CLIENT_ERROR;
    }
    if (status >= 500 && status < 600) {
      return FailureKind.SERVER_ERROR;
    }
    return FailureKind.UNKNOWN;
  }
}
