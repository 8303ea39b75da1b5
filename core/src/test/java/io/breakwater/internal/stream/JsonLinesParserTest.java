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
    assertThat(parser.retainedBytes()).isEqualTo(LineBuffer.INITIAL_CAPACITY);
  }

  @Test
  void aBufferOfUpTo64KiBIsKeptForTheNextLine() {
    // fed in pieces of the initial capacity, the line buffer doubles up to exactly 64 KiB and is kept when idle
    JsonLinesParser parser = new JsonLinesParser(1 << 20);
    byte[] line = ("{\"t\":\"" + "x".repeat(40_000) + "\"}\n").getBytes(StandardCharsets.UTF_8);
    int piece = LineBuffer.INITIAL_CAPACITY;
    for (int i = 0; i < line.length; i += piece) {
      parser.feed(Unpooled.wrappedBuffer(line, i, Math.min(piece, line.length - i)));
    }
    assertThat(parser.retainedBytes()).isEqualTo(LineBuffer.SHRINK_ABOVE);
  }

  @Test
  void whileALineIsIncompleteOnlyItIsHeld() {
    JsonLinesParser parser = new JsonLinesParser(1 << 20);
    assertThat(parser.feed(Unpooled.wrappedBuffer("{\"a\":".getBytes(StandardCharsets.UTF_8)))).isEmpty();
    assertThat(parser.retainedBytes()).isEqualTo(LineBuffer.INITIAL_CAPACITY);
    assertThat(parser.feed(Unpooled.wrappedBuffer("1}\n".getBytes(StandardCharsets.UTF_8))))
        .containsExactly("{\"a\":1}");
  }
}
