package io.breakwater.testing.llm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A loopback model server that answers each request with the next scripted {@link Reply}, in OpenAI's chat completions
 * format ({@code POST /v1/chat/completions}) or Anthropic's messages format ({@code POST /v1/messages}), streamed
 * (server-sent events, as the providers send them) or whole, as the request asks. It records when each request came
 * and when each connection closed, and keeps each request's body (what the model was sent: the tool results, for
 * instance). The replies are this project's own fixtures, written in the providers' formats.
 * Shared by the tests of the Spring AI and LangChain4j modules.
 */
public final class ScriptedModelServer implements AutoCloseable {

  /** The wire format of a provider. */
  public enum Format { OPENAI, ANTHROPIC }

  /** One scripted answer. */
  public interface Reply {
    Publisher<Void> send(Format format, boolean stream, HttpServerResponse res, Scheduler loop);
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Queue<Reply> script = new ConcurrentLinkedQueue<>();
  private volatile Reply otherwise = tokens("ok");
  private final List<Long> requestNanos = new CopyOnWriteArrayList<>();
  private final List<Long> closedNanos = new CopyOnWriteArrayList<>();
  private final List<String> bodies = new CopyOnWriteArrayList<>();
  private final List<HttpHeaders> headers = new CopyOnWriteArrayList<>();
  private final DisposableServer server;

  public ScriptedModelServer() {
    this.server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes
            .post("/v1/chat/completions", (req, res) -> answer(Format.OPENAI, req, res))
            .post("/v1/messages", (req, res) -> answer(Format.ANTHROPIC, req, res)))
        .bindNow();
  }

  /** The base URL a model of {@code format} is given. */
  public String baseUrl(Format format) {
    return "http://127.0.0.1:" + server.port() + (format == Format.OPENAI ? "/v1" : "");
  }

  /** Answers the next requests with {@code replies}, in order; later ones with {@link #otherwise}. */
  public ScriptedModelServer then(Reply... replies) {
    script.addAll(List.of(replies));
    return this;
  }

  /** Answers every request without a scripted reply with {@code reply}. */
  public ScriptedModelServer otherwise(Reply reply) {
    this.otherwise = reply;
    return this;
  }

  public int requests() {
    return requestNanos.size();
  }

  public List<Long> requestNanos() {
    return requestNanos;
  }

  public List<Long> closedNanos() {
    return closedNanos;
  }

  public List<String> bodies() {
    return bodies;
  }

  public List<HttpHeaders> headers() {
    return headers;
  }

  private Publisher<Void> answer(Format format, HttpServerRequest req, HttpServerResponse res) {
    AtomicReference<Scheduler> loop = new AtomicReference<>();
    res.withConnection(connection -> {
      connection.onDispose(() -> closedNanos.add(System.nanoTime()));
      loop.set(Schedulers.fromExecutorService(connection.channel().eventLoop()));
    });
    return req.receive().aggregate().asString(StandardCharsets.UTF_8).defaultIfEmpty("")
        .flatMapMany(body -> {
          requestNanos.add(System.nanoTime());
          bodies.add(body);
          headers.add(req.requestHeaders().copy());
          boolean stream = body.replace(" ", "").contains("\"stream\":true");
          Reply reply = script.poll();
          return (reply == null ? otherwise : reply).send(format, stream, res, loop.get());
        });
  }

  /** The tokens at once, then the end of the answer. */
  public static Reply tokens(String... tokens) {
    return drip(Duration.ZERO, false, tokens);
  }

  /** The answer's headers at once, only heartbeats until {@code firstAfter}, then the tokens and the end. */
  public static Reply firstTokenAfter(Duration firstAfter, String... tokens) {
    return drip(firstAfter, false, tokens);
  }

  /** The tokens, then only heartbeats (every 50 ms) for ever: the answer never ends. */
  public static Reply stallAfter(String... tokens) {
    return drip(Duration.ZERO, true, tokens);
  }

  /** An error status with {@code headers} and a provider-style JSON error body. */
  public static Reply status(int status, Map<String, String> headers) {
    return (format, stream, res, loop) -> {
      res.status(status).header("Content-Type", "application/json");
      headers.forEach(res::header);
      String body = format == Format.OPENAI
          ? "{\"error\":{\"message\":\"scripted " + status + "\",\"type\":\"server_error\",\"code\":null}}"
          : "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"scripted " + status + "\"}}";
      return res.sendString(Mono.just(body));
    };
  }

  /**
   * The model asks for one call of {@code tool} with {@code arguments} (a JSON object), answered whole, in OpenAI's
   * format: for a model that does not stream (LangChain4j's {@code OpenAiChatModel}, Spring AI's {@code call()}).
   */
  public static Reply toolCall(String id, String tool, String arguments) {
    return (format, stream, res, loop) -> {
      if (stream || format != Format.OPENAI) {
        return Mono.error(new IllegalStateException("toolCall is scripted for OpenAI models that do not stream"));
      }
      ObjectNode answer = JSON.createObjectNode().put("id", "chatcmpl-" + id).put("object", "chat.completion")
          .put("created", 1_700_000_000).put("model", "local");
      ObjectNode choice = answer.putArray("choices").addObject().put("index", 0).put("finish_reason", "tool_calls");
      ObjectNode call = choice.putObject("message").put("role", "assistant").putNull("content")
          .putArray("tool_calls").addObject().put("id", id).put("type", "function");
      call.putObject("function").put("name", tool).put("arguments", arguments);
      answer.putObject("usage").put("prompt_tokens", 12).put("completion_tokens", 3).put("total_tokens", 15);
      return res.header("Content-Type", "application/json").sendString(Mono.just(answer.toString()));
    };
  }

  /** The contents of the tool results (messages of role {@code tool}) in the body of request {@code index}. */
  public List<String> toolResults(int index) {
    try {
      List<String> results = new ArrayList<>();
      for (JsonNode message : JSON.readTree(bodies.get(index)).path("messages")) {
        if ("tool".equals(message.path("role").asText())) {
          results.add(message.path("content").asText());
        }
      }
      return results;
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("request " + index + " is not JSON", e);
    }
  }

  private static Reply drip(Duration firstAfter, boolean stall, String... tokens) {
    return (format, stream, res, loop) -> {
      if (!stream) {
        Mono<String> whole = Mono.just(whole(format, String.join("", tokens)));
        return res.header("Content-Type", "application/json")
            .sendString(firstAfter.isZero() ? whole : whole.delayElement(firstAfter, loop));
      }
      Flux<String> heartbeats = Flux.interval(Duration.ofMillis(50), loop).map(i -> ": keep-alive\n\n");
      Flux<String> opening = Flux.fromIterable(opening(format));
      Flux<String> waiting = firstAfter.isZero() ? Flux.empty() : heartbeats.take(firstAfter, loop);
      Flux<String> content = Flux.fromArray(tokens).map(t -> delta(format, t));
      Flux<String> ending = stall ? heartbeats : Flux.fromIterable(closing(format));
      return res.header("Content-Type", "text/event-stream")
          .sendString(Flux.concat(opening, waiting, content, ending), StandardCharsets.UTF_8);
    };
  }

  private static List<String> opening(Format format) {
    if (format == Format.OPENAI) {   // a role-only chunk first, as OpenAI sends it: framing, not content
      return List.of("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
          + "\"model\":\"local\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
          + "\"finish_reason\":null}]}\n\n");
    }
    return List.of(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
            + "\"role\":\"assistant\",\"content\":[],\"model\":\"local\",\"stop_reason\":null,\"stop_sequence\":null,"
            + "\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
            + "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: ping\ndata: {\"type\":\"ping\"}\n\n");
  }

  private static String delta(Format format, String token) {
    if (format == Format.OPENAI) {
      return "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
          + "\"model\":\"local\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + token + "\"},"
          + "\"finish_reason\":null}]}\n\n";
    }
    return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
        + "\"delta\":{\"type\":\"text_delta\",\"text\":\"" + token + "\"}}\n\n";
  }

  private static List<String> closing(Format format) {
    if (format == Format.OPENAI) {
      return List.of("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
              + "\"model\":\"local\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
          "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
              + "\"model\":\"local\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,"
              + "\"total_tokens\":15}}\n\n",
          "data: [DONE]\n\n");
    }
    return List.of(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
            + "\"stop_sequence\":null},\"usage\":{\"output_tokens\":3}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  }

  private static String whole(Format format, String text) {
    if (format == Format.OPENAI) {
      return "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":\"local\","
          + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" + text + "\"},"
          + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,"
          + "\"total_tokens\":15}}";
    }
    return "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"local\","
        + "\"content\":[{\"type\":\"text\",\"text\":\"" + text + "\"}],\"stop_reason\":\"end_turn\","
        + "\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"output_tokens\":3}}";
  }

  @Override
  public void close() {
    server.disposeNow();
  }
}
