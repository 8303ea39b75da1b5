package io.breakwater.langchain4j;

import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.PartialThinkingContext;
import dev.langchain4j.model.chat.response.PartialToolCall;
import dev.langchain4j.model.chat.response.PartialToolCallContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.chat.response.StreamingHandle;

/** One callback of a LangChain4j streaming handler, as an item of a {@code Flux}; everything but the end is content. */
sealed interface ModelEvent {

  /** Whether this event is content (progress): text, thinking, tool calls; not the end of the answer. */
  default boolean isContent() {
    return true;
  }

  /** Calls {@code handler}'s callback for this event; {@code handle} cancels the whole guarded call. */
  void deliver(StreamingChatResponseHandler handler, StreamingHandle handle);

  record Text(PartialResponse partial) implements ModelEvent {
    @Override
    public boolean isContent() {
      return !partial.text().isEmpty();
    }

    @Override
    public void deliver(StreamingChatResponseHandler handler, StreamingHandle handle) {
      handler.onPartialResponse(partial, new PartialResponseContext(handle));
    }
  }

  record Thinking(PartialThinking partial) implements ModelEvent {
    @Override
    public void deliver(StreamingChatResponseHandler handler, StreamingHandle handle) {
      handler.onPartialThinking(partial, new PartialThinkingContext(handle));
    }
  }

  record ToolCallPart(PartialToolCall partial) implements ModelEvent {
    @Override
    public void deliver(StreamingChatResponseHandler handler, StreamingHandle handle) {
      handler.onPartialToolCall(partial, new PartialToolCallContext(handle));
    }
  }

  record ToolCallDone(CompleteToolCall call) implements ModelEvent {
    @Override
    public void deliver(StreamingChatResponseHandler handler, StreamingHandle handle) {
      handler.onCompleteToolCall(call);
    }
  }

  record Complete(ChatResponse response) implements ModelEvent {
    @Override
    public boolean isContent() {
      return false;
    }

    @Override
    public void deliver(StreamingChatResponseHandler handler, StreamingHandle handle) {
      handler.onCompleteResponse(response);
    }
  }
}
