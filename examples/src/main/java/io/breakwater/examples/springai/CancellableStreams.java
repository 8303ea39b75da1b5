package io.breakwater.examples.springai;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.ai.openai.http.okhttp.OpenAiHttpClientBuilderCustomizer;
import reactor.core.publisher.Flux;

/**
 * Spring AI streams whose cancellation cancels their HTTP call, which closes its connection at once, whether the
 * answer's headers, its first token, or neither have come.
 *
 * <p>Why it is needed: cancelling {@code OpenAiChatModel.stream(..)} makes Spring AI close the SDK's
 * {@code AsyncStreamResponse}. That closes the response body only once the headers have come, by draining it for up
 * to 100 ms on the cancelling thread, and then leaves the connection to the SDK thread that is still reading it: a
 * server that keeps sending heartbeats keeps both. Before the headers it does nothing at all. OkHttp's
 * {@link Call#cancel()} closes the socket; this class gives each stream's cancellation its call.
 *
 * <p>How: Spring AI lets a caller add an OkHttp {@link Interceptor} to the client it builds for the model
 * ({@link #customizer()}, for {@code OpenAiChatModel.builder().httpClientBuilderCustomizer(..)}): the smallest
 * supported hook that reaches the {@link Call}. The SDK sends the request from another thread than the subscriber's,
 * so the stream and its call are linked by a header: {@link #stream} gives the prompt a request header with a
 * stream id (Spring AI's per-request {@code customHeaders}), and the interceptor takes the header off before the
 * request leaves, and hands the call to the stream of that id. Cancelling the stream cancels the call; a call whose
 * stream was already cancelled, or is over, is cancelled as it starts.
 *
 * <pre>{@code
 * CancellableStreams streams = new CancellableStreams();
 * OpenAiChatModel model = OpenAiChatModel.builder()
 *     .options(options)
 *     .httpClientBuilderCustomizer(streams.customizer())
 *     .build();
 * Flux<ChatResponse> answer = streams.stream(model, new Prompt("Plan a trip to Lyon"));
 * }</pre>
 *
 * <p>A model must be built with the {@link #customizer()} of the instance its streams go through (its interceptor
 * cancels a call whose stream it does not know). One instance per model, or shared by several; thread-safe.
 */
// snippet:cookbook-spring-ai-cancellable
public final class CancellableStreams {

  /** The request header that links a call to its stream; it never leaves the client. */
  static final String STREAM_HEADER = "X-Breakwater-Stream";

  private static final Object CANCELLED = new Object();

  /** Each live stream's call (or null before it starts, or CANCELLED), by stream id. */
  private final ConcurrentMap<String, AtomicReference<Object>> calls = new ConcurrentHashMap<>();

  /** For {@code OpenAiChatModel.builder().httpClientBuilderCustomizer(..)}. */
  public OpenAiHttpClientBuilderCustomizer customizer() {
    return builder -> builder.interceptor(this::link);
  }

  /**
   * {@code model.stream(prompt)}, with its HTTP call cancelled when the returned {@code Flux} is cancelled. The model
   * must have been built with this instance's {@link #customizer()}. Without options of its own, the prompt gets the
   * model's; options of its own must be {@code OpenAiChatOptions}, as the model requires.
   */
  public Flux<ChatResponse> stream(OpenAiChatModel model, Prompt prompt) {
    if (prompt.getOptions() != null && !(prompt.getOptions() instanceof OpenAiChatOptions)) {
      return Flux.error(new IllegalArgumentException("The prompt's options are " + prompt.getOptions().getClass()
          .getSimpleName() + ": give OpenAiChatOptions (the model takes no others), or none to use the model's"));
    }
    return Flux.defer(() -> {
      String id = UUID.randomUUID().toString();
      AtomicReference<Object> call = new AtomicReference<>();
      calls.put(id, call);
      return model.stream(withStreamId(prompt, model, id))
          .doOnCancel(() -> cancel(call))   // before Spring AI's own clean-up, upstream of here
          .doFinally(signal -> calls.remove(id));
    });
  }

  private static void cancel(AtomicReference<Object> call) {
    if (call.getAndSet(CANCELLED) instanceof Call started) {
      started.cancel();   // closes the socket: the SDK's reading thread fails at once and lets go
    }
  }

  private static Prompt withStreamId(Prompt prompt, OpenAiChatModel model, String id) {
    OpenAiChatOptions options = prompt.getOptions() == null ? model.getOptions()
        : (OpenAiChatOptions) prompt.getOptions();
    Map<String, String> headers = new HashMap<>(options.getCustomHeaders() == null ? Map.of()
        : options.getCustomHeaders());
    headers.put(STREAM_HEADER, id);
    return prompt.mutate().chatOptions(options.mutate().customHeaders(headers).build()).build();
  }

  private Response link(Interceptor.Chain chain) throws IOException {
    Request request = chain.request();
    String id = request.header(STREAM_HEADER);
    if (id == null) {
      return chain.proceed(request);   // not a stream of ours
    }
    AtomicReference<Object> call = calls.get(id);
    Object current = call == null ? CANCELLED : call.get();
    while (current != CANCELLED && !call.compareAndSet(current, chain.call())) {
      current = call.get();            // (a retry of the SDK's replaces the earlier call)
    }
    if (current == CANCELLED) {
      chain.call().cancel();           // its stream was cancelled, or is over, before the call started
      throw new IOException("Canceled: the stream of this call was cancelled before it was sent");
    }
    return chain.proceed(request.newBuilder().removeHeader(STREAM_HEADER).build());
  }
}
// end-snippet
