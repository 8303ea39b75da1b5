package io.breakwater.examples.springai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The world the Spring AI travel agent runs against, on loopback: an OpenAI-compatible model and the travel APIs its
 * tools call, each scripted with a fault.
 *
 * <ul>
 *   <li>The model ({@code POST /v1/chat/completions}, not streamed) is overloaded at first: its first request
 *       answers 503. Then it asks for the weather in Lyon and a train booking; after their results it asks for the
 *       booking again (models do, when unsure that a write went through); after that it answers with what the tools
 *       told it.</li>
 *   <li>The weather API ({@code GET /weather/{city}}) never answers: it accepts the request and stalls.</li>
 *   <li>The booking API ({@code POST /bookings}) charges the card and answers a booking reference, every time it is
 *       called.</li>
 * </ul>
 */
final class ScriptedWorld implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final AtomicInteger modelRequests = new AtomicInteger();
  private final AtomicInteger weatherRequests = new AtomicInteger();
  private final AtomicInteger weatherRequestsClosed = new AtomicInteger();
  private final AtomicInteger charges = new AtomicInteger();
  private final List<String> toolResultsSeen = new CopyOnWriteArrayList<>();
  private final DisposableServer model;
  private final DisposableServer apis;

  ScriptedWorld() {
    model = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.post("/v1/chat/completions", (req, res) -> req.receive().aggregate().asString()
            .flatMap(body -> answer(body, res)).then()))
        .bindNow();
    apis = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes
            .get("/weather/{city}", (req, res) -> {
              weatherRequests.incrementAndGet();
              return res.sendString(Mono.<String>never().doOnCancel(weatherRequestsClosed::incrementAndGet));
            })
            .post("/bookings", (req, res) -> req.receive().aggregate().asString().flatMap(body -> {
              int charge = charges.incrementAndGet();
              return res.header("Content-Type", "application/json")
                  .sendString(Mono.just("{\"booking\":\"BW-" + (1000 + charge) + "\",\"charged\":\"EUR 89\"}")
                      .delayElement(Duration.ofMillis(200)))
                  .then();
            })))
        .bindNow();
  }

  /** The model's base URL, as OpenAI's is written: {@code /chat/completions} follows it. */
  String modelUrl() {
    return "http://127.0.0.1:" + model.port() + "/v1";
  }

  String apisUrl() {
    return "http://127.0.0.1:" + apis.port();
  }

  int modelRequests() {
    return modelRequests.get();
  }

  int weatherRequests() {
    return weatherRequests.get();
  }

  /** Weather requests whose connection the client closed (the stalled call was cut, not left hanging). */
  int weatherRequestsClosed() {
    return weatherRequestsClosed.get();
  }

  /** How many times the card was charged. */
  int charges() {
    return charges.get();
  }

  /** The tool results the model was sent, in the order it got them: what the model read. */
  List<String> toolResultsSeen() {
    return List.copyOf(toolResultsSeen);
  }

  private Mono<Void> answer(String body, HttpServerResponse res) {
    if (modelRequests.incrementAndGet() == 1) {
      return res.status(503).header("Content-Type", "application/json")
          .sendString(Mono.just("{\"error\":{\"message\":\"The model is overloaded\",\"type\":\"server_error\"}}"))
          .then();
    }
    List<String> results = toolResults(body);
    String reply = switch (results.size()) {
      case 0 -> toolCalls(call("call_1", "weather", "{\"city\":\"Lyon\"}"),
          call("call_2", "book_train", "{\"city\":\"Lyon\",\"date\":\"2026-12-12\"}"));
      case 2 -> toolCalls(call("call_3", "book_train", "{\"city\":\"Lyon\",\"date\":\"2026-12-12\"}"));
      default -> text("Your trip to Lyon on 12 December: " + String.join(" | ", results));
    };
    if (results.size() > toolResultsSeen.size()) {
      toolResultsSeen.addAll(results.subList(toolResultsSeen.size(), results.size()));
    }
    return res.header("Content-Type", "application/json").sendString(Mono.just(reply)).then();
  }

  /** The contents of the {@code tool} messages of a chat-completions request, in order. */
  private static List<String> toolResults(String body) {
    List<String> results = new ArrayList<>();
    try {
      for (JsonNode message : JSON.readTree(body).path("messages")) {
        if ("tool".equals(message.path("role").asText())) {
          results.add(message.path("content").asText());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return results;
  }

  private static ObjectNode call(String id, String name, String arguments) {
    ObjectNode call = JSON.createObjectNode().put("id", id).put("type", "function");
    call.putObject("function").put("name", name).put("arguments", arguments);
    return call;
  }

  private static String toolCalls(ObjectNode... calls) {
    ObjectNode message = JSON.createObjectNode().put("role", "assistant").putNull("content");
    ArrayNode toolCalls = message.putArray("tool_calls");
    for (ObjectNode call : calls) {
      toolCalls.add(call);
    }
    return completion(message, "tool_calls");
  }

  private static String text(String content) {
    return completion(JSON.createObjectNode().put("role", "assistant").put("content", content), "stop");
  }

  private static String completion(ObjectNode message, String finishReason) {
    ObjectNode completion = JSON.createObjectNode().put("id", "chatcmpl-local").put("object", "chat.completion")
        .put("created", 1_765_000_000L).put("model", "local");
    completion.putArray("choices").addObject().put("index", 0).put("finish_reason", finishReason)
        .set("message", message);
    completion.putObject("usage").put("prompt_tokens", 50).put("completion_tokens", 20).put("total_tokens", 70);
    return completion.toString();
  }

  @Override
  public void close() {
    model.disposeNow();
    apis.disposeNow();
  }
}
