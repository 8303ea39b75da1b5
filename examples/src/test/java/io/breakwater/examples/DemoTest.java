package io.breakwater.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

class DemoTest {

  /**
   * The demo's first call has a 2 s deadline. In a cold JVM on a loaded 2-core box, the first Reactor Netty request
   * (event loops, class loading, the resolver) took 3 s, so the demo measured our own start-up, not its deadline.
   * One untimed round trip on loopback first.
   */
  @BeforeAll
  static void warmUpReactorNetty() {
    DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
        .handle((req, res) -> res.sendString(Mono.just("ok"))).bindNow();
    try {
      HttpClient.create().host("127.0.0.1").port(server.port()).get().uri("/").responseContent().aggregate()
          .asString().block(Duration.ofSeconds(60));
    } finally {
      server.disposeNow();
    }
  }

  @Test
  void demoBoundsTheStalledCallAndSkipsTheExpiredOne() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    int calls = new Demo(new PrintStream(buffer, true, StandardCharsets.UTF_8)).run();
    String out = buffer.toString(StandardCharsets.UTF_8);

    assertThat(out).contains("1. weather, within a 2 s task deadline -> sunny (server had ");
    assertThat(out).contains("2. flights (the server stalls 28 s), within a 500 ms deadline -> stopped: "
        + "Deadline 'task /flights' exceeded: ");
    assertThat(out).contains("3. weather, with a budget already spent -> stopped: Deadline 'task /weather' "
        + "exceeded: 0ns of 0ns used");
    assertThat(calls).as("the expired call never reaches the server").isEqualTo(2);
  }
}
