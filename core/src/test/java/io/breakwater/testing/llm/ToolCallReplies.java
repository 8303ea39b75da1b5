package io.breakwater.testing.llm;

import io.breakwater.testing.llm.ScriptedModelServer.Format;
import java.nio.charset.StandardCharsets;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Replies of a loopback OpenAI-format server that ask the model's client to call a tool: a whole
 * {@code chat.completion} or a stream of chunks, with {@code finish_reason: tool_calls}, as OpenAI sends them. For
 * {@link ScriptedModelServer#then}; shared by the tests of the Spring AI module and the Boot starter.
 */
public final class ToolCallReplies {

  private ToolCallReplies() {}

  /** The model asks for the tool {@code name} with {@code argumentsJson}, under the call id {@code id}. */
  public static ScriptedModelServer.Reply toolCall(String id, String name, String argumentsJson) {
    String call = "{\"id\":\"" + id + "\",\"type\":\"function\",\"function\":{\"name\":\"" + name
        + "\",\"arguments\":" + quoted(argumentsJson) + "}}";
    return (format, stream, res, loop) -> {
      if (format != Format.OPENAI) {
        throw new IllegalArgumentException("tool-call replies are scripted in OpenAI's format only");
      }
      if (!stream) {
        return res.header("Content-Type", "application/json").sendString(Mono.just(
            "{\"id\":\"chatcmpl-t\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":\"local\","
                + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,"
                + "\"tool_calls\":[" + call + "]},\"finish_reason\":\"tool_calls\"}],"
                + "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15}}"));
      }
      String chunk = "data: {\"id\":\"chatcmpl-t\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
          + "\"model\":\"local\",\"choices\":[{\"index\":0,\"delta\":";
      List<String> events = List.of(
          chunk + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[" + call.replaceFirst("\\{", "{\"index\":0,")
              + "]},\"finish_reason\":null}]}\n\n",
          chunk + "{},\"finish_reason\":\"tool_calls\"}]}\n\n",
          "data: [DONE]\n\n");
      return res.header("Content-Type", "text/event-stream")
          .sendString(Flux.fromIterable(events), StandardCharsets.UTF_8);
    };
  }

  /** {@code text} as a JSON string. */
  private static String quoted(String text) {
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
  }
}
