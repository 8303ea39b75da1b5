package io.breakwater.internal.failure;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.Retryability;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;

/**
 * Failures made of several failures: Reactor's composites ({@code Exceptions.multiple(..)}, whose parts are its
 * suppressed exceptions), as {@code zipDelayError}, {@code whenDelayError}, {@code mergeDelayError} and
 * {@code concatDelayError} signal them when more than one source failed.
 *
 * <p>A composite is judged by its parts: it is of the kind of its least retryable part (retrying it would run that
 * part again, to the same end), and among retryable parts, a rate limit wins (it asks for the longest wait). The walk
 * follows causes and parts at most {@value #MAX_DEPTH} levels deep, which also guards against cycles.
 */
public final class CompositeFailures {

  /** How deep causes and parts are followed. */
  public static final int MAX_DEPTH = 8;

  private CompositeFailures() {}

  /** Whether {@code failure} is a composite of several failures. */
  public static boolean isComposite(Throwable failure) {
    return Exceptions.isMultiple(Exceptions.unwrap(failure));
  }

  /**
   * {@code failure}'s kind by {@code classifier}: a composite's from its parts, each classified by
   * {@code classifier}; anything else as {@code classifier} says.
   */
  public static FailureKind classify(FailureClassifier classifier, Throwable failure) {
    Throwable unwrapped = Exceptions.unwrap(failure);
    if (!Exceptions.isMultiple(unwrapped)) {
      return classifier.classify(failure);
    }
    FailureKind decided = null;
    for (Throwable part : Exceptions.unwrapMultiple(unwrapped)) {
      decided = decisive(decided, classifier.classify(part));
    }
    return decided == null ? FailureKind.UNKNOWN : decided;
  }

  /** Of the kinds of two parts of a composite, the one that decides the composite's ({@code a} may be null). */
  public static FailureKind decisive(@Nullable FailureKind a, FailureKind b) {
    return a == null || rank(b) > rank(a) ? b : a;
  }

  /** Whether {@code failure}, one of its causes or one of a composite's parts (recursively) matches {@code test}. */
  public static boolean any(Throwable failure, Predicate<? super Throwable> test) {
    return any(failure, test, 0);
  }

  private static boolean any(Throwable failure, Predicate<? super Throwable> test, int depth) {
    Throwable current = failure;
    for (int d = depth; current != null && d < MAX_DEPTH; d++) {
      current = Exceptions.unwrap(current);
      if (test.test(current)) {
        return true;
      }
      if (Exceptions.isMultiple(current)) {
        for (Throwable part : Exceptions.unwrapMultiple(current)) {
          if (part != current && any(part, test, d + 1)) {
            return true;
          }
        }
        return false;
      }
      Throwable cause = current.getCause();
      current = cause == current ? null : cause;
    }
    return false;
  }

  /**
   * The first of {@code failure} and its causes, at most {@value #MAX_DEPTH} deep, that is a {@code type} (Reactor's
   * wrappers unwrapped); {@code null} if none is.
   */
  public static <T extends Throwable> @Nullable T first(Throwable failure, Class<T> type) {
    Throwable current = failure;
    for (int depth = 0; current != null && depth < MAX_DEPTH; depth++) {
      current = Exceptions.unwrap(current);
      if (type.isInstance(current)) {
        return type.cast(current);
      }
      Throwable cause = current.getCause();
      current = cause == current ? null : cause;
    }
    return null;
  }

  /** Higher wins: non-retryable over unknown over retryable; among retryable kinds a rate limit. */
  private static int rank(FailureKind kind) {
    if (kind.retryability() == Retryability.NON_RETRYABLE) {
      return 3;
    }
    if (kind.retryability() == Retryability.UNKNOWN) {
      return 2;
    }
    return kind == FailureKind.RATE_LIMITED ? 1 : 0;
  }
}
