package io.breakwater.stream;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;

/**
 * Signalled by the {@link ServerSentEvents} decoder when a line, or the event being assembled, grows past the
 * configured limit, instead of buffering without bound; also by {@link JsonLines} for a line over its limit, and as
 * the cause of the truncation of an LLM response whose output passes {@code maxResponseBytes}. Retrying would receive the same event, so its kind is
 * {@link FailureKind#INVALID_ARGUMENT} (non-retryable). The message names the limit and how to raise it:
 *
 * <pre>{@code
 * ServerSentEvents.builder().maxEventBytes(32 * 1024 * 1024).build().events(bytes);
 * }</pre>
 */
public final class EventTooLargeException extends IllegalStateException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final int limit;
  private final String source;

  public EventTooLargeException(int limit) {
    this(limit, "sse-decoder", "Server-sent event line or event exceeds " + limit + " bytes: raise the limit with "
        + "ServerSentEvents.builder().maxEventBytes(n) if such events are expected");
  }

  /**
   * A limit of another decoder or assembler (an NDJSON line, an LLM response's output), with a message that names
   * what exceeded {@code limit} and how to raise it; {@code source} names that decoder or assembler.
   */
  public EventTooLargeException(int limit, String source, String message) {
    super(message);
    this.limit = limit;
    this.source = source;
  }

  /** The limit in bytes that was exceeded. */
  public int limit() {
    return limit;
  }

  @Override
  public String source() {
    return source;
  }

  /** {@link FailureKind#INVALID_ARGUMENT}: the same stream would exceed the limit again. */
  @Override
  public FailureKind failureKind() {
    return FailureKind.INVALID_ARGUMENT;
  }

  /** No stack trace: the message says all. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
