package io.breakwater.stream.llm;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import java.util.Locale;

/**
 * The server reported an error inside the stream ({@code data: {"error": ...}} or {@code event: error}), classified
 * by its type: rate limits are {@link FailureKind#RATE_LIMITED}; server, API and overload errors
 * {@link FailureKind#SERVER_ERROR}; invalid requests {@link FailureKind#INVALID_ARGUMENT}; authentication,
 * permission, not-found and quota errors {@link FailureKind#CLIENT_ERROR}; anything else
 * {@link FailureKind#UNKNOWN}.
 *
 * <pre>{@code
 * client.stream(request).onErrorResume(LlmStreamException.class, e -> Flux.empty());
 * }</pre>
 */
public final class LlmStreamException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String source;
  private final String errorType;
  private final FailureKind kind;

  /**
   * @param source what reported it, e.g. {@code "llm:openai_chat"}
   * @param errorType the server's error type or code, e.g. {@code overloaded_error}; {@code ""} if none
   * @param message the server's message
   */
  public LlmStreamException(String source, String errorType, String message) {
    super("Stream error" + (errorType.isEmpty() ? "" : " " + errorType) + " from " + source + ": " + message);
    this.source = source;
    this.errorType = errorType;
    this.kind = kindOf(errorType);
  }

  /** The kind of a server's error type or code. */
  public static FailureKind kindOf(String errorType) {
    String t = errorType.toLowerCase(Locale.ROOT);
    if (t.contains("rate_limit") || t.equals("too_many_requests")) {
      return FailureKind.RATE_LIMITED;
    }
    if (t.contains("overloaded") || t.contains("server_error") || t.equals("api_error") || t.contains("internal")
        || t.contains("unavailable")) {
      return FailureKind.SERVER_ERROR;
    }
    if (t.contains("timeout")) {
      return FailureKind.TIMEOUT;
    }
    if (t.contains("invalid_request") || t.contains("invalid_argument") || t.equals("context_length_exceeded")) {
      return FailureKind.INVALID_ARGUMENT;
    }
    if (t.contains("authentication") || t.contains("permission") || t.contains("not_found")
        || t.contains("insufficient_quota")) {
      return FailureKind.CLIENT_ERROR;
    }
    return FailureKind.UNKNOWN;
  }

  /** The server's error type or code; {@code ""} if it gave none. */
  public String errorType() {
    return errorType;
  }

  @Override
  public String source() {
    return source;
  }

  @Override
  public FailureKind failureKind() {
    return kind;
  }

  /** No stack trace: the decoder raised it, the server's message says what happened. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
