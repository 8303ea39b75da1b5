package io.breakwater.springai;

import io.breakwater.testing.llm.ScriptedModelServer.Format;
import java.time.Duration;
import org.springframework.ai.anthropic.AnthropicChatModel;
import org.springframework.ai.anthropic.AnthropicChatOptions;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

/** Spring AI's real OpenAI and Anthropic chat models, pointed at a loopback server. */
final class SpringAiModels {

  private SpringAiModels() {}

  /**
   * A model of {@code format} for {@code baseUrl}: the SDK's own retries off (retries belong to the advisor, which
   * knows what was delivered) and its socket timeout long (heartbeats keep resetting it anyway).
   */
  static ChatModel model(Format format, String baseUrl, CancellableCalls calls) {
    if (format == Format.OPENAI) {
      return OpenAiChatModel.builder()
          .options(OpenAiChatOptions.builder().baseUrl(baseUrl).apiKey("not-needed-locally").model("local")
              .maxRetries(0).timeout(Duration.ofMinutes(5)).build())
          .httpClientBuilderCustomizer(calls.openAi())
          .build();
    }
    return AnthropicChatModel.builder()
        .options(AnthropicChatOptions.builder().baseUrl(baseUrl).apiKey("not-needed-locally").model("local")
            .maxTokens(256).maxRetries(0).timeout(Duration.ofMinutes(5)).build())
        .httpClientBuilderCustomizer(calls.anthropic())
        .build();
  }
}
