package io.breakwater.internal.failure;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.retry.RetryAttempt;
import io.breakwater.retry.RetryExhaustedException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import reactor.core.Exceptions;

/**
 * The one rule for re-sending a non-idempotent write: whether a failure leaves open that the request was processed.
 *
 * <p>A write may have happened after a timeout, a 5xx, a connection lost after the request was written, a passed
 * deadline, or anything unrecognised. It did not after a 429, a connection that never opened (refused, unresolved, no
 * route: a {@link ConnectException}, which includes connect timeouts), a duplicate still in flight, or a refusal of
 * Breakwater's own (open breaker, limit, budget, configuration). A definite answer of the dependency (400, 4xx, a
 * business refusal) is its decision, not an unknown. A composite may have happened if any part may have; a
 * {@link RetryExhaustedException} if any of its attempts may have.
 */
public final class WriteOutcome {

  private WriteOutcome() {}

  /** Whether the write that ended in {@code failure} may have been processed by the dependency. */
  public static boolean mayHaveHappened(FailureClassifier classifier, Throwable failure) {
    return mayHaveHappened(classifier, failure, 0);
  }

  private static boolean mayHaveHappened(FailureClassifier classifier, Throwable failure, int depth) {
    if (depth >= CompositeFailures.MAX_DEPTH) {
      return true;   // too deep to judge: assume the worst
    }
    Throwable unwrapped = Exceptions.unwrap(failure);
    if (Exceptions.isMultiple(unwrapped)) {
      for (Throwable part : Exceptions.unwrapMultiple(unwrapped)) {
        if (part != unwrapped && mayHaveHappened(classifier, part, depth + 1)) {
          return true;
        }
      }
      return false;
    }
    if (unwrapped instanceof RetryExhaustedException exhausted) {
      for (RetryAttempt attempt : exhausted.attempts()) {
        if (attempt.error() != exhausted && mayHaveHappened(classifier, attempt.error(), depth + 1)) {
          return true;
        }
      }
      return exhausted.attempts().isEmpty() && exhausted.getCause() != null
          && mayHaveHappened(classifier, exhausted.getCause(), depth + 1);
    }
    return switch (classifier.classify(unwrapped)) {
      case TIMEOUT, SERVER_ERROR, UNKNOWN, DEADLINE_EXCEEDED, FATAL -> true;
      case CONNECTION -> !neverConnected(unwrapped);
      default -> false;
    };
  }

  /** A connection that was never opened: nothing was written. */
  private static boolean neverConnected(Throwable failure) {
    return CompositeFailures.any(failure, t -> t instanceof ConnectException || t instanceof UnknownHostException
        || t instanceof NoRouteToHostException || t instanceof UnresolvedAddressException);
  }
}
