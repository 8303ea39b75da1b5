package io.breakwater.stream;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.http.ServerText;
import java.io.Serializable;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@link StreamTruncatedException} and {@link StreamTruncatedByTimeoutException} both carry. Serialized with
 * them; the producer's partial result only if it is itself serializable ({@code LlmResponse} is not).
 */
record Truncation(String source, String partialOutput, long itemsDelivered, @Nullable Object partialResult,
    FailureKind kind) implements Serializable {

  private static final long serialVersionUID = 1L;

  Truncation {
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(partialOutput, "partialOutput");
    Objects.requireNonNull(kind, "kind");
  }

  private Object writeReplace() {
    return partialResult == null || partialResult instanceof Serializable ? this
        : new Truncation(source, partialOutput, itemsDelivered, null, kind);
  }

  String message(@Nullable Throwable cause) {
    return "Stream from " + source + " "
        + (cause == null ? "ended without its terminal event"
            : "failed: " + cause.getClass().getSimpleName() + ": " + ServerText.quote(String.valueOf(cause.getMessage())))
        + " after " + itemsDelivered + " items (" + partialOutput.length() + " chars of partial output attached)";
  }
}
