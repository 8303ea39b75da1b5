package io.breakwater.examples;

import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.deadline.DeadlineSpec;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/**
 * What Breakwater does so far, against a real HTTP tool server on loopback: a task deadline that travels to the
 * server, bounds a slow call, and stops a call that could no longer finish in time before it is made.
 *
 * <p>Run it with the first command of the README.
 */
public final class Demo {

  private final PrintStream out;
  private final AtomicInteger slowCallsCancelled = new AtomicInteger();
  private final AtomicInteger toolCalls = new AtomicInteger();

  public Demo(PrintStream out) {
    this.out = out;
  }

  public static void main(String[] args) {
    new Demo(System.out).run();
  }

  /** Runs the demo and returns how many calls reached the tool server. */
  public int run() {
    DeadlineHeader header = DeadlineHeader.standard();
    DisposableServer tools = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes
            .get("/weather", header.honour((req, res) -> {
              toolCalls.incrementAndGet();
              return res.sendString(Mono.deferContextual(ctx -> Mono.just("sunny (server had "
                  + Deadline.from(ctx).map(d -> d.remaining().toMillis() + " ms").orElse("no deadline")
                  + " left)")));
            }))
            .get("/flights", header.honour((req, res) -> {
              toolCalls.incrementAndGet();
              return res.sendString(Mono.delay(Duration.ofSeconds(28)).map(x -> "flights")
                  .doFinally(signal -> {
                    if (signal == SignalType.CANCEL) {
                      slowCallsCancelled.incrementAndGet();
                    }
                  }));
            })))
        .bindNow();
    try {
      HttpClient client = header.sendOn(HttpClient.create().host("127.0.0.1").port(tools.port()));
      out.println("Breakwater demo: a tool server on 127.0.0.1:" + tools.port());

      step("1. weather, within a 2 s task deadline", call(client, "/weather", Duration.ofSeconds(2)));
      step("2. flights (the server stalls 28 s), within a 500 ms deadline",
          call(client, "/flights", Duration.ofMillis(500)));
      step("3. weather, with a budget already spent", call(client, "/weather", Duration.ZERO));

      out.println("Tool calls that reached the server: " + toolCalls.get()
          + "; stalled calls the server saw cancelled: " + slowCallsCancelled.get());
      return toolCalls.get();
    } finally {
      tools.disposeNow();
    }
  }

  private Mono<String> call(HttpClient client, String path, Duration budget) {
    return client.get().uri(path).responseContent().aggregate().asString()
        .transformDeferred(withDeadline(DeadlineSpec.builder(budget).name("task " + path).build()));
  }

  private void step(String what, Mono<String> call) {
    String outcome = call
        .onErrorResume(DeadlineExceededException.class, e -> Mono.just("stopped: " + e.getMessage()))
        .block(Duration.ofSeconds(10));
    out.println(what + " -> " + outcome);
  }
}
