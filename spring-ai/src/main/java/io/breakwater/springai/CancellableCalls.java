package io.breakwater.springai;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.anthropic.http.okhttp.AnthropicHttpClientBuilderCustomizer;
import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.openai.http.okhttp.OpenAiHttpClientBuilderCustomizer;

/**
 * Makes cancelling a call of a Spring AI OpenAI or Anthropic chat model close its HTTP connection at once, whether the
 * answer's headers, its first token, or neither have come.
 *
 * <p>Without it, cancelling {@code ChatModel.stream(..)} closes the SDK's stream only once the headers have come (and
 * then leaves the connection to the SDK thread still reading it, which a server sending heartbeats keeps busy), and
 * does nothing before them; a cancelled blocking {@code call(..)} keeps its connection until the answer is read.
 * Spring AI lets you add an OkHttp interceptor to the client it builds for a model: this one links each request to its
 * call by a request header that never leaves the client, and {@link BreakwaterAdvisor} cancels the OkHttp call of an
 * attempt it cancels (a timeout, a lost hedge, the caller walking away).
 *
 * <pre>{@code
 * CancellableCalls calls = new CancellableCalls();
 * OpenAiChatModel model = OpenAiChatModel.builder().options(options)
 *     .httpClientBuilderCustomizer(calls.openAi())
 *     .build();
 * ChatClient chat = ChatClient.builder(model)
 *     .defaultAdvisors(BreakwaterAdvisor.builder("openai").cancellableCalls(calls).build())
 *     .build();
 * }</pre>
 *
 * <p>A request whose call is not known to this instance (a model built with its customizer but called without the
 * advisor) is sent as usual. Requests are tagged through the prompt's options ({@code OpenAiChatOptions}'s custom
 * headers, {@code AnthropicChatOptions}'s HTTP headers); other options are not tagged, and their calls are not closed
 * by this class. Thread-safe; one instance may serve several models.
 */
public final class CancellableCalls {

  /** The request header that links a request to its call; it is removed before the request leaves. */
  static final String CALL_HEADER = "X-Breakwater-Call";

  private static final Object CANCELLED = new Object();

  /** Each open call's OkHttp call (or null before it starts, or CANCELLED), by call id. */
  private final ConcurrentMap<String, AtomicReference<Object>> calls = new ConcurrentHashMap<>();
  /** The last call id given (ids are unique per instance; a random UUID would read the entropy source). */
  private final AtomicLong lastId = new AtomicLong();

  /** For {@code OpenAiChatModel.builder().httpClientBuilderCustomizer(..)}. */
  public OpenAiHttpClientBuilderCustomizer openAi() {
    return builder -> builder.interceptor(this::link);
  }

  /** For {@code AnthropicChatModel.builder().httpClientBuilderCustomizer(..)}. */
  public AnthropicHttpClientBuilderCustomizer anthropic() {
    return builder -> builder.interceptor(this::link);
  }

  /** Opens a call: its id, to {@link #tag} its request with and to {@link #cancel} or {@link #close} it by. */
  String open() {
    String id = Long.toString(lastId.incrementAndGet());
    calls.put(id, new AtomicReference<>());
    return id;
  }

  /** {@code request} with the call header in its options, or {@code request} itself if its options take none. */
  ChatClientRequest tag(ChatClientRequest request, String id) {
    ChatOptions options = request.prompt().getOptions();
    ChatOptions tagged = options == null ? null : ProviderOptions.withHeader(options, CALL_HEADER, id);
    return tagged == null ? request
        : request.mutate().prompt(request.prompt().mutate().chatOptions(tagged).build()).build();
  }

  /** Cancels the call's HTTP call, now if it started, else as it starts. */
  void cancel(String id) {
    AtomicReference<Object> call = calls.get(id);
    if (call != null && call.getAndSet(CANCELLED) instanceof Call started) {
      started.cancel();   // closes the socket: the SDK's reading thread fails at once and lets go
    }
  }

  /** Forgets a call that ended; a request of it that starts later is cancelled. */
  void close(String id) {
    calls.remove(id);
  }

  private Response link(Interceptor.Chain chain) throws IOException {
    Request request = chain.request();
    String id = request.header(CALL_HEADER);
    if (id == null) {
      return chain.proceed(request);   // not a call of ours
    }
    AtomicReference<Object> call = calls.get(id);
    Object current = call == null ? CANCELLED : call.get();
    while (call != null && current != CANCELLED && !call.compareAndSet(current, chain.call())) {
      current = call.get();            // (a retry of the SDK's replaces the earlier call)
    }
    if (current == CANCELLED) {
      chain.call().cancel();           // its call was cancelled, or is over, before the request started
      throw new IOException("Canceled: the call of this request was cancelled before it was sent");
    }
    return chain.proceed(request.newBuilder().removeHeader(CALL_HEADER).build());
  }

  /** Copies of a map with one more entry. */
  static Map<String, String> with(@Nullable Map<String, String> headers, String name, String value) {
    Map<String, String> copy = new HashMap<>(headers == null ? Map.of() : headers);
    copy.put(name, value);
    return copy;
  }
}
