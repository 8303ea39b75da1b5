package io.breakwater.stream;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.TimeoutFailure;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * A stream that had delivered content was cut by a timeout: it stalled past its idle timeout, or a deadline or the
 * stream's own maximum duration passed. The {@link StreamTruncatedException} of a timeout, and a
 * {@link TimeoutException}, so that one {@code onErrorResume(TimeoutException.class, ..)} catches a stall before
 * the first token and after it alike. What was delivered is attached as in a {@link StreamTruncatedException}; the
 * cause is the timeout ({@link IdleTimeoutException}, a {@code DeadlineExceededException}), or a
 * {@code RetryExhaustedException} listing every attempt when resumes were tried.
 *
 * <pre>{@code
 * client.stream(request).as(LlmResponse::aggregate)
 *     .onErrorResume(TimeoutException.class, e -> Mono.justOrEmpty(LlmResponse.partialOf(e)));
 * }</pre>
 *
 * <p>Its kind is {@link FailureKind#TIMEOUT}.
 */
public final class StreamTruncatedByTimeoutException extends TimeoutFailure {

  private static final long serialVersionUID = 1L;

  private final Truncation truncation;

  /**
   * @param source what detected it, e.g. {@code "llm:openai_chat"}
   * @param partialOutput the content delivered before the timeout, as text
   * @param itemsDelivered how many items were delivered
   * @param partialResult the producer's own partial result, or {@code null}
   * @param cause the timeout (or the exhausted resumes after it)
   */
  public StreamTruncatedByTimeoutException(String source, String partialOutput, long itemsDelivered,
      @Nullable Object partialResult, Throwable cause) {
    this(new Truncation(source, partialOutput, itemsDelivered, partialResult, FailureKind.TIMEOUT), cause);
  }

  private StreamTruncatedByTimeoutException(Truncation truncation, Throwable cause) {
    super(truncation.source(), truncation.kind(), truncation.message(cause), cause);
    this.truncation = truncation;
  }

  /** The content delivered before the timeout, as text. */
  public String partialOutput() {
    return truncation.partialOutput();
  }

  /**
   * The producer's own partial result (an {@code LlmResponse} for {@code LlmStreamClient}), or {@code null}; also
   * {@code null} on a deserialized copy when the result was not serializable.
   */
  @Nullable
  public Object partialResult() {
    return truncation.partialResult();
  }

  /** How many items were delivered before the timeout. */
  public long itemsDelivered() {
    return truncation.itemsDelivered();
  }
}
