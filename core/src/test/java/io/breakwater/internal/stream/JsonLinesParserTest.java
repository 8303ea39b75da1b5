package io.breakwater.internal.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class JsonLinesParserTest {

  @Test
  void aLongLineDoesNotPinItsBufferForTheRestOfTheStream() {
    JsonLinesParser parser = new JsonLinesParser(1 << 20);
    String longLine = "{\"t\":\"" + "x".repeat(200_000) + "\"}\n";
    assertThat(parser.feed(Unpooled.wrappedBuffer(longLine.getBytes(StandardCharsets.UTF_8)))).hasSize(1);
    assertThat(parser.retainedBytes()).isLessThanOrEqualTo(128);
  }

  @Test
  void whileALineIsIncompleteOnlyItIsHeld() {
    JsonLinesParser parser = new JsonLinesParser(1 << 20);
    assertThat(parser.feed(Unpooled.wrappedBuffer("{\"a\":".getBytes(StandardCharsets.UTF_8)))).isEmpty();
    assertThat(parser.feed(Unpooled.wrappedBuffer("1}\n".getBytes(StandardCharsets.UTF_8))))
        .containsExactly("{\"a\":1}");
  }
}
