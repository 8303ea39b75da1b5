package io.breakwater.examples.travel;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * An OpenAI-compatible chat-completions server on loopback that streams a scripted answer as server-sent events, one
 * word per event with the word's number as its event id. The first request stalls: it sends only keep-alive comments,
 * as a model that accepted the request and never produced a token (or, if so constructed, the first few words and
 * then only keep-alives, as a model that stalls mid-answer). Later requests stream the answer word by word and end
 * with {@code [DONE]}; one that carries {@code Last-Event-ID: n} continues after word n, as a server that can resume
 * a stream does.
 */
public final class ScriptedLlmServer implements AutoCloseable {

  private final AtomicInteger requests = new AtomicInteger();
  private final AtomicInteger stalledStreamsClosed = new AtomicInteger();
  private final AtomicInteger wordsSent = new AtomicInteger();
  private final DisposableServer server;
  private final List<String> words;
  private final int wordsBeforeStall;

  /** A server whose first stream stalls before its first token. */
  public ScriptedLlmServer(String answer) {
    this(answer, 0);
  }

  /** A server whose first stream sends {@code wordsBeforeStall} words of the answer, then stalls. */
  public ScriptedLlmServer(String answer, int wordsBeforeStall) {
    this.words = List.of(answer.split("(?<= )"));
    if (wordsBeforeStall < 0 || wordsBeforeStall >= words.size()) {
      throw new IllegalArgumentException("wordsBeforeStall is " + wordsBeforeStall + ": give 0 to "
          + (words.size() - 1) + ", fewer than the answer's words");
    }
    this.wordsBeforeStall = wordsBeforeStall;
    server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.post("/v1/chat/completions", (req, res) -> res
            .header("Content-Type", "text/event-stream")
            .sendString(req.receive().aggregate().asString().defaultIfEmpty("")
                .flatMapMany(body -> requests.incrementAndGet() == 1 ? stall()
                    : answer(resumeAfter(req.requestHeaders().get("Last-Event-ID")))))))
        .bindNow();
  }

  private Flux<String> stall() {
    return chunks(0, wordsBeforeStall)
        .concatWith(Flux.interval(Duration.ofMillis(250)).map(i -> ": keep-alive\n\n"))
        .doOnCancel(stalledStreamsClosed::incrementAndGet);
  }

  private Flux<String> answer(int after) {
    return chunks(after, words.size()).concatWithValues("data: [DONE]\n\n");
  }

  /** The words numbered {@code from + 1} to {@code to}, each an event whose id is its number. */
  private Flux<String> chunks(int from, int to) {
    return Flux.range(from + 1, Math.max(0, to - from))
        .delayElements(Duration.ofMillis(15))
        .doOnNext(n -> wordsSent.incrementAndGet())
        .map(n -> "id: " + n + "\ndata: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
            + "{\"content\":" + quote(words.get(n - 1)) + "}}]}\n\n");
  }

  /** The word a resumed stream continues after: the {@code Last-Event-ID} if it is one, else none. */
  private int resumeAfter(String lastEventId) {
    try {
      return lastEventId == null ? 0 : Math.max(0, Math.min(words.size(), Integer.parseInt(lastEventId.trim())));
    } catch (NumberFormatException notOurs) {
      return 0;
    }
  }

  private static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + server.port();
  }

  public int requests() {
    return requests.get();
  }

  /** Words of the answer sent, over all streams (a resumed stream sends only the words after its last event id). */
  public int wordsSent() {
    return wordsSent.get();
  }

  /** The number of words in {@code text}, counted as the server splits its answer into events. */
  public static int words(String text) {
    return text.isEmpty() ? 0 : text.split("(?<= )").length;
  }

  public int stalledStreamsClosed() {
    return stalledStreamsClosed.get();
  }

  @Override
  public void close() {
    server.disposeNow();
  }
}
