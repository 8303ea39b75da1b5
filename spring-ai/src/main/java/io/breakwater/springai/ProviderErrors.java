package io.breakwater.springai;

import com.anthropic.errors.AnthropicIoException;
import com.anthropic.errors.AnthropicServiceException;
import com.openai.errors.OpenAIIoException;
import com.openai.errors.OpenAIServiceException;
import io.breakwater.failure.HttpStatusException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/**
 * The failures of the OpenAI and Anthropic SDKs under Spring AI's models, in the form Breakwater's classifier, retry
 * and rate limits read: an error status becomes an {@link HttpStatusException} with the response's headers (so that
 * {@code Retry-After} and the rate-limit headers are honoured) and the SDK's exception as its cause; an I/O failure
 * becomes the {@code IOException} under it; a {@code CompletionException} is unwrapped. Anything else is kept.
 */
final class ProviderErrors {

  private static final boolean OPENAI = ProviderOptions.present("com.openai.errors.OpenAIServiceException");
  private static final boolean ANTHROPIC = ProviderOptions.present("com.anthropic.errors.AnthropicServiceException");
  private static final int MAX_UNWRAP = 8;

  private ProviderErrors() {}

  static Throwable toBreakwater(Throwable error) {
    Throwable e = error;
    for (int i = 0; i < MAX_UNWRAP && (e instanceof CompletionException || e instanceof ExecutionException)
        && e.getCause() != null; i++) {
      e = e.getCause();
    }
    if (OPENAI) {
      Throwable mapped = OpenAi.map(e);
      if (mapped != null) {
        return mapped;
      }
    }
    if (ANTHROPIC) {
      Throwable mapped = Anthropic.map(e);
      if (mapped != null) {
        return mapped;
      }
    }
    return e;
  }

  static HttpStatusException status(int status, Set<String> names, Function<String, List<String>> values,
      Throwable cause) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    for (String name : names) {
      headers.put(name, List.copyOf(values.apply(name)));
    }
    HttpStatusException mapped = new HttpStatusException(status, headers, cause.getMessage());
    mapped.initCause(cause);
    return mapped;
  }

  private static final class OpenAi {
    static @org.jspecify.annotations.Nullable Throwable map(Throwable e) {
      if (e instanceof OpenAIServiceException s) {
        return status(s.statusCode(), s.headers().names(), s.headers()::values, s);
      }
      if (e instanceof OpenAIIoException io && io.getCause() != null) {
        return io.getCause();
      }
      return null;
    }
  }

  private static final class Anthropic {
    static @org.jspecify.annotations.Nullable Throwable map(Throwable e) {
      if (e instanceof AnthropicServiceException s) {
        return status(s.statusCode(), s.headers().names(), s.headers()::values, s);
      }
      if (e instanceof AnthropicIoException io && io.getCause() != null) {
        return io.getCause();
      }
      return null;
    }
  }
}
