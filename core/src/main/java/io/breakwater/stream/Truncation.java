package io.breakwater.stream;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.http.ServerText;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** What {@link StreamTruncatedException} and {@link StreamTruncatedByTimeoutException} both carry. */
record Truncation(String source, String partialOutput, long itemsDelivered, @Nullable Object partialResult,
    FailureKind kind) {

  Truncation {
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(partialOutput, "partialOutput");
    Objects.requireNonNull(kind, "kind");
  }

  String message(@Nullable Throwable cause) {
    return "Stream from " + source + " "
        + (cause == null ? "ended without its terminal event"
            : "failed: " + cause.getClass().getSimpleName() + ": " + ServerText.quote(String.valueOf(cause.getMessage())))
        + " after " + itemsDelivered + " items (" + partialOutput.length() + " chars of partial output attached)";
  }
}
