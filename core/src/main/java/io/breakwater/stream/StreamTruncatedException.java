package io.breakwater.stream;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;

/**
 * A stream failed after it had delivered content, and could not be resumed: it ended without its terminal event
 * (e.g. {@code [DONE]}, {@code message_stop}), the connection dropped, it stalled, or the server reported an error
 * mid-stream. The content delivered so far is attached ({@link #partialOutput()}) so the caller can keep, show or
 * discard it; the cause, if any, is the failure that ended it.
 *
 * <p>Its kind is the cause's ({@link FailureClassifier#defaults()}), or {@link FailureKind#CONNECTION} for a stream
 * that simply ended early. A retry regenerates the whole answer: decide whether that is wanted.
 *
 * <pre>{@code
 * client.stream(request)
 *     .onErrorResume(StreamTruncatedException.class, e -> Flux.just(e.partialOutput() + " [truncated]"));
 * }</pre>
 */
public final class StreamTruncatedException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String source;
  private final String partialOutput;
  private final long itemsDelivered;

  /**
   * @param source what detected it, e.g. {@code "llm:openai_chat"}
   * @param partialOutput the content delivered before the failure
   * @param itemsDelivered how many items were delivered
   * @param cause the failure that ended the stream, or {@code null} if it ended without its terminal event
   */
  public StreamTruncatedException(String source, String partialOutput, long itemsDelivered, Throwable cause) {
    super("Stream from " + source + " "
        + (cause == null ? "ended without its terminal event" : "failed: " + cause.getMessage())
        + " after " + itemsDelivered + " items (" + partialOutput.length() + " chars of partial output attached)",
        cause);
    this.source = source;
    this.partialOutput = partialOutput;
    this.itemsDelivered = itemsDelivered;
  }

  /** The content delivered before the failure. */
  public String partialOutput() {
    return partialOutput;
  }

  /** How many items were delivered before the failure. */
  public long itemsDelivered() {
    return itemsDelivered;
  }

  @Override
  public String source() {
    return source;
  }

  /** The cause's kind, or {@link FailureKind#CONNECTION} when the stream simply ended early. */
  @Override
  public FailureKind failureKind() {
    return getCause() == null ? FailureKind.CONNECTION : FailureClassifier.defaults().classify(getCause());
  }

  /** No stack trace: the message and the cause say what happened. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
