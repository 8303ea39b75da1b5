package io.breakwater.stream.llm;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;
import io.breakwater.internal.http.ServerText;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The server reported an error inside the stream: an {@code event: error} (also with HTTP 200), an in-band
 * {@code "error"} object, Responses {@code response.failed}, an Ollama {@code {"error": ..}} line. The same
 * exception whether it arrives before the first token or after it, so one handler catches both:
 *
 * <pre>{@code
 * client.stream(request).as(LlmResponse::aggregate)
 *     .onErrorResume(LlmStreamException.class, e -> Mono.just(e.partialResponse()));
 * }</pre>
 *
 * <ul>
 *   <li>{@link #partialResponse()}: what the stream delivered before the error (no content when it came first).</li>
 *   <li>Classified by its type or code: rate limits {@link FailureKind#RATE_LIMITED}; server, API and overload
 *       errors {@link FailureKind#SERVER_ERROR}; invalid requests {@link FailureKind#INVALID_ARGUMENT};
 *       authentication, permission, not-found and quota errors {@link FailureKind#CLIENT_ERROR}; a numeric code as
 *       an HTTP status; anything else {@link FailureKind#UNKNOWN}. Before the first token a retryable one is retried;
 *       after it, never (the generation failed).</li>
 *   <li>The server's type, code and message are quoted escaped and cut to 200 characters: a hostile server cannot
 *       forge log lines or flood them.</li>
 *   <li>When the client retried before giving up, the cause is the {@code RetryExhaustedException} that lists
 *       every attempt (so an outer {@code retryWithBudget} does not retry it again).</li>
 * </ul>
 */
public final class LlmStreamException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final String errorType;
  private final String errorCode;
  private final transient @Nullable LlmResponse partialResponse;   // not serialized

  /**
   * @param source what reported it, e.g. {@code "llm:openai_chat"}
   * @param errorType the server's error type, e.g. {@code overloaded_error}; {@code ""} if none
   * @param errorCode the server's error code, e.g. {@code rate_limit_exceeded} or {@code 400}; {@code ""} if none
   * @param message the server's message
   */
  public LlmStreamException(String source, String errorType, String errorCode, String message) {
    this(source, ServerText.quote(errorType), ServerText.quote(errorCode), message(source, errorType, errorCode,
        message), null, null);
  }

  private LlmStreamException(String source, String errorType, String errorCode, @Nullable String message,
      @Nullable LlmResponse partialResponse, @Nullable Throwable cause) {
    super(Objects.requireNonNull(source, "source"), kindOf(errorType, errorCode), message, cause);
    this.errorType = errorType;
    this.errorCode = errorCode;
    this.partialResponse = partialResponse;
  }

  private static String message(String source, String errorType, String errorCode, String message) {
    String label = errorType.isEmpty() ? errorCode : errorCode.isEmpty() ? errorType : errorType + "/" + errorCode;
    return "Stream error" + (label.isEmpty() ? "" : " " + ServerText.quote(label)) + " from " + source + ": "
        + ServerText.quote(message);
  }

  /** This error with the response delivered before it and, when the client retried first, the exhausted retry. */
  public LlmStreamException withPartialResponse(LlmResponse partialResponse, @Nullable Throwable cause) {
    return new LlmStreamException(source(), errorType, errorCode, getMessage(),
        Objects.requireNonNull(partialResponse, "partialResponse"), cause);
  }

  /** The kind of a server's error type or code. */
  public static FailureKind kindOf(String errorType) {
    String t = errorType.toLowerCase(Locale.ROOT);
    if (t.contains("rate_limit") || t.equals("too_many_requests") || t.equals("resource_exhausted")) {
      return FailureKind.RATE_LIMITED;
    }
    if (t.contains("overloaded") || t.contains("server_error") || t.equals("api_error") || t.contains("internal")
        || t.contains("unavailable")) {
      return FailureKind.SERVER_ERROR;
    }
    if (t.contains("timeout")) {
      return FailureKind.TIMEOUT;
    }
    if (t.contains("invalid_request") || t.contains("invalid_argument") || t.equals("context_length_exceeded")
        || t.equals("tool_use_failed")) {
      return FailureKind.INVALID_ARGUMENT;
    }
    if (t.contains("authentication") || t.contains("permission") || t.contains("not_found")
        || t.contains("insufficient_quota")) {
      return FailureKind.CLIENT_ERROR;
    }
    if (!t.isEmpty() && t.length() == 3 && t.chars().allMatch(Character::isDigit)) {
      int status = Integer.parseInt(t);
      return status == 429 ? FailureKind.RATE_LIMITED
          : status == 408 ? FailureKind.TIMEOUT
          : status >= 500 ? FailureKind.SERVER_ERROR
          : status == 400 || status == 422 ? FailureKind.INVALID_ARGUMENT
          : status >= 400 ? FailureKind.CLIENT_ERROR
          : FailureKind.UNKNOWN;
    }
    return FailureKind.UNKNOWN;
  }

  private static FailureKind kindOf(String errorType, String errorCode) {
    FailureKind byType = kindOf(errorType);
    return byType != FailureKind.UNKNOWN ? byType : kindOf(errorCode);
  }

  /** The server's error type; {@code ""} if it gave none. */
  public String errorType() {
    return errorType;
  }

  /** The server's error code; {@code ""} if it gave none. */
  public String errorCode() {
    return errorCode;
  }

  /**
   * What the stream delivered before the error; a response without content when the error came first, and on a
   * deserialized copy.
   */
  public LlmResponse partialResponse() {
    return partialResponse != null ? partialResponse : LlmResponse.NOTHING;
  }
}
