package io.breakwater.springai;

import org.jspecify.annotations.Nullable;
import org.springframework.ai.anthropic.AnthropicChatOptions;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.openai.OpenAiChatOptions;

/**
 * Request headers through the options of the providers whose models {@link CancellableCalls} serves. Each provider's
 * classes are touched only when that provider is on the class path (both are optional dependencies).
 */
final class ProviderOptions {

  private static final boolean OPENAI = present("org.springframework.ai.openai.OpenAiChatOptions");
  private static final boolean ANTHROPIC = present("org.springframework.ai.anthropic.AnthropicChatOptions");

  private ProviderOptions() {}

  /** {@code options} with the request header {@code name}, or {@code null} if they carry no request headers. */
  static @Nullable ChatOptions withHeader(ChatOptions options, String name, String value) {
    if (OPENAI && OpenAi.matches(options)) {
      return OpenAi.withHeader(options, name, value);
    }
    if (ANTHROPIC && Anthropic.matches(options)) {
      return Anthropic.withHeader(options, name, value);
    }
    return null;
  }

  static boolean present(String className) {
    try {
      Class.forName(className, false, ProviderOptions.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private static final class OpenAi {
    static boolean matches(ChatOptions options) {
      return options instanceof OpenAiChatOptions;
    }

    static ChatOptions withHeader(ChatOptions options, String name, String value) {
      OpenAiChatOptions openAi = (OpenAiChatOptions) options;
      return openAi.mutate().customHeaders(CancellableCalls.with(openAi.getCustomHeaders(), name, value)).build();
    }
  }

  private static final class Anthropic {
    static boolean matches(ChatOptions options) {
      return options instanceof AnthropicChatOptions;
    }

    static ChatOptions withHeader(ChatOptions options, String name, String value) {
      AnthropicChatOptions anthropic = (AnthropicChatOptions) options;
      return anthropic.mutate().httpHeaders(CancellableCalls.with(anthropic.getHttpHeaders(), name, value)).build();
    }
  }
}
