package io.breakwater.stream.llm;

import io.breakwater.internal.stream.llm.ResponseAssembler;
import io.breakwater.stream.StreamTruncatedByTimeoutException;
import io.breakwater.stream.StreamTruncatedException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * An LLM response assembled from its {@link LlmDelta}s: text, refusal and reasoning per choice, complete tool calls
 * with parsed arguments, citations, the finish reason (mapped and raw), usage, model and id, and how many attempts
 * the call took. Immutable; Jackson serialises and reads it back (so {@code idempotentBy} can keep it).
 *
 * <pre>{@code
 * Mono<LlmResponse> answer = client.stream(request).as(LlmResponse::aggregate);
 * answer.subscribe(r -> System.out.println(r.text() + " [" + r.finishReason() + ", " + r.usage() + "]"));
 * }</pre>
 *
 * <p>A stream that fails after content carries the response assembled so far: read it with {@link #partialOf}.
 *
 * @param id the response's id ({@code chatcmpl-…}, {@code msg_…}, {@code resp_…}); {@code ""} if none was sent
 * @param model the model that answered; {@code ""} if not named
 * @param choices the choices by index; at least one
 * @param usage the usage last reported, or {@code null} when the server reported none
 * @param attempts the HTTP attempts the call made, retries and resumes included (0 when unknown, e.g. for deltas
 *     that did not come from {@link LlmStreamClient})
 * @param completed whether the stream ended with its terminal event ({@code false} for a partial response)
 */
public record LlmResponse(String id, String model, List<LlmChoice> choices, @Nullable TokenUsage usage, int attempts,
    boolean completed) {

  /** A response without content: what an error that came first, or a deserialized copy of one, carries. */
  static final LlmResponse NOTHING = new LlmResponse("", "", List.of(LlmChoice.empty(0)), null, 0, false);

  public LlmResponse {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(model, "model");
    choices = List.copyOf(choices);
    if (choices.isEmpty()) {
      throw new IllegalArgumentException("an LlmResponse has at least one choice");
    }
  }

  /**
   * Assembles {@code deltas} into one response: fails as they fail, and completes with the response when they
   * complete. Use it with {@code Flux.as}: {@code client.stream(request).as(LlmResponse::aggregate)}.
   */
  public static Mono<LlmResponse> aggregate(Publisher<? extends LlmDelta> deltas) {
    return Flux.from(deltas).collect(ResponseAssembler::new, ResponseAssembler::accept)
        .map(ResponseAssembler::build);
  }

  /**
   * The partial response a failure of {@link LlmStreamClient} carries: a {@link StreamTruncatedException}, a
   * {@link StreamTruncatedByTimeoutException}, an {@link LlmStreamException} or an {@link LlmIncompleteException},
   * found in {@code error} or its causes. Empty for failures before the stream began.
   */
  public static Optional<LlmResponse> partialOf(Throwable error) {
    Throwable current = error;
    for (int depth = 0; current != null && depth < 8; depth++) {
      Object partial = null;
      if (current instanceof StreamTruncatedException t) {
        partial = t.partialResult();
      } else if (current instanceof StreamTruncatedByTimeoutException t) {
        partial = t.partialResult();
      } else if (current instanceof LlmStreamException e) {
        partial = e.partialResponse();
      } else if (current instanceof LlmIncompleteException e) {
        partial = e.response();
      }
      if (partial instanceof LlmResponse response) {
        return Optional.of(response);
      }
      Throwable cause = current.getCause();
      current = cause == current ? null : cause;
    }
    return Optional.empty();
  }

  /** The first choice. */
  public LlmChoice choice() {
    return choices.get(0);
  }

  /** The choice of {@code index}, or an empty one if there is none. */
  public LlmChoice choice(int index) {
    for (LlmChoice c : choices) {
      if (c.index() == index) {
        return c;
      }
    }
    return LlmChoice.empty(index);
  }

  /** The first choice's text. */
  public String text() {
    return choice().text();
  }

  /** The first choice's refusal; {@code ""} if none. */
  public String refusal() {
    return choice().refusal();
  }

  /** The first choice's reasoning; {@code ""} if none. */
  public String reasoning() {
    return choice().reasoning();
  }

  /** The first choice's tool calls for the caller to run. */
  public List<ToolCall> toolCalls() {
    return choice().toolCalls();
  }

  /** The first choice's finish reason. */
  public FinishReason finishReason() {
    return choice().finishReason();
  }
}
