package io.breakwater.examples.llm;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A loopback server that answers every POST with the next of its bodies (the last one again afterwards), each
 * preceded by an optional delay and followed by an optional stall, and records the paths requested.
 */
final class LoopbackSse implements AutoCloseable {

  final List<String> paths = new CopyOnWriteArrayList<>();
  private final AtomicInteger requests = new AtomicInteger();
  private final DisposableServer server;

  LoopbackSse(String contentType, Duration stallAfter, String... bodies) {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .handle((req, res) -> {
          paths.add(req.uri());
          String body = bodies[Math.min(requests.getAndIncrement(), bodies.length - 1)];
          Flux<String> out = Flux.just(body);
          if (!stallAfter.isZero()) {
            out = out.concatWith(Mono.delay(stallAfter).then(Mono.empty()));
          }
          Flux<String> answer = out;
          // the request is read before the answer is sent: read inside the send, its buffers would be released twice
          return req.receive().then().then(Mono.from(res.header("Content-Type", contentType).sendString(answer)));
        })
        .bindNow();
  }

  static LoopbackSse sse(String... bodies) {
    return new LoopbackSse("text/event-stream", Duration.ZERO, bodies);
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.port();
  }

  int requests() {
    return requests.get();
  }

  @Override
  public void close() {
    server.dispose();
  }
}
