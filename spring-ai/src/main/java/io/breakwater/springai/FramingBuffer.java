package io.breakwater.springai;

import java.util.ArrayList;
import java.util.List;
import org.springframework.ai.chat.client.ChatClientResponse;

/**
 * The framing of one attempt before its first content: held, then delivered in order with the first content (or when
 * the attempt ends without any). Per subscription; used on one thread at a time, as Reactor signals are.
 */
final class FramingBuffer {

  private List<ChatClientResponse> held = new ArrayList<>();
  private boolean content;

  /** What to deliver now for {@code response}. */
  List<ChatClientResponse> pass(ChatClientResponse response) {
    if (content) {
      return List.of(response);
    }
    held.add(response);
    if (!BreakwaterAdvisor.isContent(response)) {
      return List.of();
    }
    content = true;
    return release();
  }

  /** The responses held so far, no longer held. */
  List<ChatClientResponse> release() {
    List<ChatClientResponse> out = held;
    held = new ArrayList<>();
    return out;
  }
}
