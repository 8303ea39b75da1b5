package io.breakwater.examples.guide;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.publisher.Flux;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** An OpenAI-compatible chat completions server on loopback that streams a fixed answer word by word. */
final class LoopbackLlm implements AutoCloseable {

  private final AtomicReference<String> authorization = new AtomicReference<>();
  private final DisposableServer server;

  LoopbackLlm(List<String> words) {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.post("/v1/chat/completions", (req, res) -> {
          authorization.set(req.requestHeaders().get("Authorization"));
          return res.header("Content-Type", "text/event-stream")
              .sendString(req.receive().aggregate().asString().defaultIfEmpty("").flatMapMany(body -> Flux.fromIterable(words)
                  .map(word -> "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + word + "\"}}]}\n\n")
                  .concatWithValues("data: [DONE]\n\n")));
        }))
        .bindNow();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.port();
  }

  String lastAuthorization() {
    return authorization.get();
  }

  @Override
  public void close() {
    server.dispose();   // not disposeNow: it would wait for the client's pooled keep-alive connection
  }
}
