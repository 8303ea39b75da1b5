package io.breakwater.internal.failure;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;

/**
 * The default rules. Netty and Reactor Netty types are matched by name, so the classifier works whether or not they
 * are on the class path, and for the shaded copies some libraries carry.
 */
public final class DefaultFailureClassifier implements FailureClassifier {

  public static final DefaultFailureClassifier INSTANCE = new DefaultFailureClassifier();

  /** How deep the cause chain (and a composite's parts) is followed; also guards against cycles. */
  private static final int MAX_CAUSE_DEPTH = CompositeFailures.MAX_DEPTH;

  private DefaultFailureClassifier() {}

  @Override
  public FailureKind classify(Throwable failure) {
    return classify(failure, 0);
  }

  /** Walks the cause chain; a composite (several failures in one) is classified by its parts. */
  private FailureKind classify(Throwable failure, int depth0) {
    Throwable current = Exceptions.unwrap(failure);
    for (int depth = depth0; current != null && depth < MAX_CAUSE_DEPTH; depth++) {
      current = Exceptions.unwrap(current);
      if (Exceptions.isMultiple(current)) {
        FailureKind decided = null;
        for (Throwable part : Exceptions.unwrapMultiple(current)) {
          decided = CompositeFailures.decisive(decided, part == current ? FailureKind.UNKNOWN
              : classify(part, depth + 1));
        }
        return decided == null ? FailureKind.UNKNOWN : decided;
      }
      FailureKind kind = classifyOne(current);
      if (kind != FailureKind.UNKNOWN) {
        return kind;
      }
      Throwable cause = current.getCause();
      current = cause == current ? null : cause;
    }
    return FailureKind.UNKNOWN;
  }

  private static FailureKind classifyOne(Throwable t) {
    if (t instanceof BreakwaterException b) {
      return b.failureKind();
    }
    if (t instanceof HttpStatusException h) {
      return FailureClassifier.ofStatus(h.status());
    }
    if (t instanceof TimeoutException || t instanceof SocketTimeoutException) {
      return FailureKind.TIMEOUT;
    }
    if (t instanceof SocketException || t instanceof ClosedChannelException || t instanceof UnknownHostException) {
      return FailureKind.CONNECTION;
    }
    if (t instanceof IllegalArgumentException) {
      return FailureKind.INVALID_ARGUMENT;
    }
    if (t instanceof Error) {
      return FailureKind.FATAL;
    }
    return byName(t);
  }

  private static FailureKind byName(Throwable t) {
    for (Class<?> type = t.getClass(); type != null && type != Throwable.class; type = type.getSuperclass()) {
      switch (type.getSimpleName()) {
        case "ReadTimeoutException", "WriteTimeoutException", "PoolAcquireTimeoutException",
            "HttpTimeoutException" -> {
          return FailureKind.TIMEOUT;
        }
        case "ConnectTimeoutException", "PrematureCloseException", "AbortedException", "NativeIoException",
            "ConnectException", "NoRouteToHostException" -> {
          return FailureKind.CONNECTION;
        }
        default -> {
          // keep walking up the type hierarchy
        }
      }
    }
    if (t instanceof IOException && isConnectionMessage(t.getMessage())) {
      return FailureKind.CONNECTION;
    }
    return FailureKind.UNKNOWN;
  }

  private static boolean isConnectionMessage(@Nullable String message) {
    return message != null && (message.contains("Connection reset") || message.contains("Broken pipe")
        || message.contains("Connection prematurely closed") || message.contains("Connection refused"));
  }
}
