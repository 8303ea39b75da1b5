package io.breakwater.stream;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;
import org.jspecify.annotations.Nullable;

/**
 * A stream failed after it had delivered content, and could not be resumed: it ended without its terminal event
 * (e.g. {@code [DONE]}, {@code message_stop}), the connection dropped, or its output grew past a limit. What was
 * delivered so far is attached: {@link #partialOutput()} as text, and {@link #partialResult()} as the producer's
 * own partial result (for {@code LlmStreamClient}, an {@code LlmResponse}: read it with
 * {@code LlmResponse.partialOf(e)}). The cause, if any, is the failure that ended it; when resumes were tried, a
 * {@code RetryExhaustedException} that lists every attempt (the first is the one that cut the stream).
 *
 * <p>A stream cut by a timeout (a stall, a deadline) is a {@link StreamTruncatedByTimeoutException} instead, so that
 * {@code onErrorResume(TimeoutException.class, ..)} catches it.
 *
 * <pre>{@code
 * client.stream(request).as(LlmResponse::aggregate)
 *     .onErrorResume(StreamTruncatedException.class, e -> Mono.justOrEmpty(LlmResponse.partialOf(e)));
 * }</pre>
 *
 * <p>Its kind is the kind of the failure that cut the stream ({@link FailureKind#CONNECTION} for a stream that simply
 * ended early); its {@link #source()} names what detected it, e.g. {@code "llm:openai_chat"}. A retry regenerates
 * the whole answer: decide whether that is wanted.
 */
public final class StreamTruncatedException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final Truncation truncation;

  /**
   * @param source what detected it, e.g. {@code "llm:openai_chat"}
   * @param partialOutput the content delivered before the failure, as text
   * @param itemsDelivered how many items were delivered
   * @param cause the failure that ended the stream, or {@code null} if it ended without its terminal event
   */
  public StreamTruncatedException(String source, String partialOutput, long itemsDelivered,
      @Nullable Throwable cause) {
    this(source, partialOutput, itemsDelivered, null,
        cause == null ? FailureKind.CONNECTION : FailureClassifier.defaults().classify(cause), cause);
  }

  /**
   * @param source what detected it, e.g. {@code "llm:openai_chat"}
   * @param partialOutput the content delivered before the failure, as text
   * @param itemsDelivered how many items were delivered
   * @param partialResult the producer's own partial result, or {@code null}
   * @param kind the kind of the failure that cut the stream
   * @param cause the failure that ended the stream, or {@code null} if it ended without its terminal event
   */
  public StreamTruncatedException(String source, String partialOutput, long itemsDelivered,
      @Nullable Object partialResult, FailureKind kind, @Nullable Throwable cause) {
    this(new Truncation(source, partialOutput, itemsDelivered, partialResult, kind), cause);
  }

  private StreamTruncatedException(Truncation truncation, @Nullable Throwable cause) {
    super(truncation.source(), truncation.kind(), truncation.message(cause), cause);
    this.truncation = truncation;
  }

  /** The content delivered before the failure, as text. */
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

  /** How many items were delivered before the failure. */
  public long itemsDelivered() {
    return truncation.itemsDelivered();
  }
}
