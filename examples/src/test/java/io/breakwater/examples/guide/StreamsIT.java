package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.llm.LlmStreamClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The snippets of docs/stream.md. */
class StreamsIT {

  @Test
  void theClientSendsItsKeyAndStreamsTheAnswer() {
    try (LoopbackLlm server = new LoopbackLlm(List.of("Lyon ", "has ", "two ", "rivers"))) {
      LlmStreamClient client = Streams.client(server.baseUrl(), "sk-test");

      String answer = String.join("", Streams.tokens(client).collectList().block(Duration.ofSeconds(10)));

      assertThat(answer).isEqualTo("Lyon has two rivers");
      assertThat(server.lastAuthorization()).isEqualTo("Bearer sk-test");
    }
  }

  @Test
  void pingsAfterTheFirstEventDoNotHideAStall() {
    StepVerifier.withVirtualTime(() -> Streams.data(Flux.concat(
                Flux.just(bytes("data: hello\n\n")),
                Flux.interval(Duration.ofSeconds(1)).map(i -> bytes("event: ping\ndata: {}\n\n")))))
        .expectNext("hello")
        .thenAwait(Duration.ofSeconds(4))                 // the progress clock sees a stall within 1.25 × 3 s
        .expectError(IdleTimeoutException.class)
        .verify(Duration.ofSeconds(5));
  }

  private static ByteBuf bytes(String text) {
    return Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
  }
}
