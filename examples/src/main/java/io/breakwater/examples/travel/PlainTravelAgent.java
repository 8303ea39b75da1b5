package io.breakwater.examples.travel;

import io.netty.handler.codec.LineBasedFrameDecoder;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;

/**
 * The travel agent's task written without Breakwater, as plain Reactor Netty code commonly is: no deadline, a naive
 * {@code retry(3)} on any error, the same fallback for attractions, the deposit sent each time it is asked for, and
 * a model stream read until it ends. It runs against fresh instances of the same scripted servers. Two calls would
 * hang (the flights request for 28 s, the model stream for ever), so the demo cuts each after a fixed time and says
 * so; the cuts are the demo's, not the code's.
 */
public final class PlainTravelAgent {

  private static final Pattern CONTENT = Pattern.compile("\"content\":\"((?:[^\"\\\\]|\\\\.)*)\"");

  private final PrintStream out;
  private final Duration cut;
  private final Map<String, String> notes = new HashMap<>();
  private long startNanos;

  /** A plain agent whose hanging calls the demo gives up after {@code cut}. */
  public PlainTravelAgent(PrintStream out, Duration cut) {
    this.out = out;
    this.cut = cut;
  }

  /** Plans the trip against freshly started scripted servers; returns what happened. */
  public RunSummary run() {
    try (ScriptedToolServer tools = new ScriptedToolServer();
        ScriptedLlmServer llm = new ScriptedLlmServer(TravelAgent.ANSWER, TravelAgent.WORDS_BEFORE_STALL)) {
      return plan(tools, llm);
    }
  }

  private RunSummary plan(ScriptedToolServer tools, ScriptedLlmServer llm) {
    startNanos = now();
    HttpClient http = HttpClient.create().host("127.0.0.1").port(tools.port());
    out.println("Without Breakwater: the same trip in plain Reactor Netty (no deadline, retry(3) on any error, "
        + "the deposit sent as asked); the demo cuts a call that hangs after " + cut.toSeconds() + " s");
    Mono<String> task = Mono.zip(
            step("flights", cutByDemo("flights", get(http, "/flights").retry(3)
                .map(body -> body.replace('\n', ' ')))),
            step("hotels", get(http, "/hotels").retry(3)),
            step("attractions", get(http, "/attractions").retry(3).onErrorReturn(TravelAgent.OFFLINE_ATTRACTIONS)))
        .flatMap(found -> step("deposit", post(http).retry(3))
            .then(step("deposit (again)", post(http).retry(3)))
            .then(Mono.defer(() -> {
              line("model: streaming the plan");
              return stream(llm, found.getT1() + found.getT2() + found.getT3());
            })));
    String answer = null;
    String failure = null;
    try {
      answer = task.block();
    } catch (RuntimeException e) {
      failure = e.getCause() instanceof TimeoutException ? "no answer: the model stream hung after "
          + llm.wordsSent() + " words" : "failure: " + e.getMessage();
    }
    double took = (now() - startNanos) / 1e9;
    String outcome = answer != null ? "the plan, " + ScriptedLlmServer.words(answer) + " words"
        : failure != null ? failure : "no answer";
    line(answer != null ? "answer: " + answer : outcome);
    out.println();
    String taskTime = notes.isEmpty() ? String.format("%.1f s", took)
        : String.format("hung (cut by the demo at %.1f s)", took);
    return RunSummary.of(taskTime, outcome, notes, tools, llm, answer);
  }

  /** Gives up a call that hangs after the demo's cut, notes it, and lets the task go on without its answer. */
  private Mono<String> cutByDemo(String what, Mono<String> call) {
    return call.timeout(cut, Schedulers.parallel())
        .onErrorResume(TimeoutException.class, e -> {
          notes.put(what, "hung; cut by the demo at " + cut.toSeconds() + " s");
          return Mono.just("no answer: hung, cut by the demo at " + cut.toSeconds() + " s");
        });
  }

  private Mono<String> step(String what, Mono<String> call) {
    return call.doOnNext(text -> line(what + ": " + text));
  }

  private static Mono<String> get(HttpClient http, String path) {
    return http.get().uri(path).responseSingle((res, body) -> res.status().code() >= 400
        ? Mono.error(new IllegalStateException(path + " answered " + res.status().code()))
        : body.asString());
  }

  private static Mono<String> post(HttpClient http) {
    return http.post().uri("/payments")
        .send(ByteBufFlux.fromString(Mono.just("{\"bookingId\":\"booking-2026-12-24\",\"amountEuros\":50}")))
        .responseSingle((res, body) -> body.asString());
  }

  /** Reads the model's server-sent events line by line until {@code [DONE]}; the demo cuts it if it hangs. */
  private Mono<String> stream(ScriptedLlmServer llm, String found) {
    String request = "{\"model\":\"local-planner\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":"
        + "\"Plan the trip with: " + found.replace("\"", "'") + "\"}]}";
    StringBuilder answer = new StringBuilder();
    return HttpClient.create()
        .doOnConnected(c -> c.addHandlerLast(new LineBasedFrameDecoder(64 * 1024)))
        .headers(h -> h.set("Content-Type", "application/json"))
        .post().uri(llm.baseUrl() + "/v1/chat/completions")
        .send(ByteBufFlux.fromString(Mono.just(request)))
        .responseContent().asString(StandardCharsets.UTF_8)
        .takeUntil(line -> line.equals("data: [DONE]"))
        .filter(line -> line.startsWith("data: {"))
        .doOnNext(line -> answer.append(content(line)))
        .then(Mono.fromCallable(answer::toString))
        .timeout(cut, Schedulers.parallel())
        .doOnError(TimeoutException.class, e -> notes.put("model", "hung; cut by the demo at " + cut.toSeconds()
            + " s"));
  }

  private static String content(String line) {
    Matcher m = CONTENT.matcher(line);
    return m.find() ? m.group(1).replace("\\\"", "\"").replace("\\\\", "\\") : "";
  }

  private synchronized void line(@Nullable String text) {
    out.printf("%7.2f s  %s%n", (now() - startNanos) / 1e9, text);
  }

  private static long now() {
    return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
  }
}
