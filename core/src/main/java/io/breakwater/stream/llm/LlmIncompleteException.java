package io.breakwater.stream.llm;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;
import io.breakwater.internal.http.ServerText;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The stream ended properly, but the answer is incomplete: a choice finished with {@link FinishReason#LENGTH}
 * (a token limit), {@link FinishReason#CONTENT_FILTER} or {@link FinishReason#PAUSE} (Anthropic
 * {@code pause_turn}), or OpenAI Responses reported {@code response.incomplete}. Signalled after every delta was
 * delivered, instead of completing as if the answer were whole; the assembled response is attached.
 *
 * <pre>{@code
 * client.stream(request).as(LlmResponse::aggregate)
 *     .onErrorResume(LlmIncompleteException.class, e -> e.response().finishReason() == FinishReason.PAUSE
 *         ? continueTurn(e.response()) : Mono.error(e));
 * }</pre>
 *
 * <p>Its kind is {@link FailureKind#BUSINESS}: the same request would end the same way, and the server is not at
 * fault, so it is neither retried nor counted by a breaker.
 */
public final class LlmIncompleteException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final transient @Nullable LlmResponse response;   // not serialized: the message names its finish reasons

  /**
   * @param source the client that received it, e.g. {@code "llm:openai_chat"}
   * @param response the assembled response
   */
  public LlmIncompleteException(String source, LlmResponse response) {
    super(Objects.requireNonNull(source, "source"), FailureKind.BUSINESS, "Response from " + source
        + " is incomplete: " + response.choices().stream()
            .filter(c -> c.finishReason().isIncomplete())
            .map(c -> "choice " + c.index() + " finished with " + c.finishReason() + " ("
                + ServerText.quote(c.rawFinishReason()) + ")")
            .reduce((a, b) -> a + ", " + b).orElse("the server reported it incomplete"), null);
    this.response = response;
  }

  /**
   * The response as assembled, with its finish reasons; a response without content on a deserialized copy, whose
   * message still names them.
   */
  public LlmResponse response() {
    return response != null ? response : LlmResponse.NOTHING;
  }
}
