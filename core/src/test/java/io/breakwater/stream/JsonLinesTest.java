package io.breakwater.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The NDJSON decoder's rules, each decoded whole, cut at every byte position and in random chunkings. */
class JsonLinesTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  static List<String> decode(JsonLines decoder, byte[]... chunks) {
    return decoder.lines(Flux.fromArray(chunks).map(Unpooled::wrappedBuffer)).collectList().block(VERIFY);
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Every way of cutting {@code bytes} in two decodes to {@code expected}. */
  static void assertEveryCut(String text, List<String> expected) {
    byte[] bytes = utf8(text);
    assertThat(decode(JsonLines.builder().build(), bytes)).isEqualTo(expected);
    for (int cut = 0; cut <= bytes.length; cut++) {
      assertThat(decode(JsonLines.builder().build(), Arrays.copyOfRange(bytes, 0, cut),
          Arrays.copyOfRange(bytes, cut, bytes.length))).as("cut at %d", cut).isEqualTo(expected);
    }
  }

  @Test
  void linesEndWithLfAndACrBeforeItIsDropped() {
    assertEveryCut("{\"a\":1}\n{\"b\":2}\r\n{\"c\":3}\n", List.of("{\"a\":1}", "{\"b\":2}", "{\"c\":3}"));
  }

  @Test
  void blankLinesAreSkippedAndOneLeadingByteOrderMarkIsStripped() {
    assertEveryCut("\uFEFF{\"a\":1}\n\n  \t\r\n{\"b\":2}\n", List.of("{\"a\":1}", "{\"b\":2}"));
  }

  @Test
  void aByteOrderMarkAloneOnTheFirstLineLeavesABlankLine() {
    assertEveryCut("\uFEFF\n{\"a\":1}\n", List.of("{\"a\":1}"));
  }

  @Test
  void aLineOfExactlyTheLimitIsReadAndOneByteMoreFails() {
    String exactly = "{\"t\":\"" + "x".repeat(64 - 8) + "\"}";   // 64 bytes before its line feed
    assertThat(utf8(exactly)).hasSize(64);
    JsonLines limit = JsonLines.builder().maxLineBytes(64).build();
    assertThat(decode(limit, utf8(exactly + "\n"))).containsExactly(exactly);
    StepVerifier.create(limit.lines(Flux.just(Unpooled.wrappedBuffer(utf8(exactly + " \n")))))
        .expectError(EventTooLargeException.class)
        .verify(VERIFY);
  }

  @Test
  void anUnterminatedLastLineIsDiscarded() {
    assertEveryCut("{\"a\":1}\n{\"b\":", List.of("{\"a\":1}"));
  }

  @Test
  void codePointsSplitAcrossBuffersDecodeAndInvalidUtf8BecomesAReplacementCharacter() {
    assertEveryCut("{\"t\":\"é°\uD83D\uDE04\"}\n", List.of("{\"t\":\"é°\uD83D\uDE04\"}"));
    assertThat(decode(JsonLines.builder().build(), new byte[] {'"', (byte) 0xC3, '"', '\n'}))
        .containsExactly("\"\uFFFD\"");
  }

  @Test
  void randomChunkingsNeverChangeTheLines() {
    Random random = new Random(7);
    for (int stream = 0; stream < 200; stream++) {
      List<String> lines = new ArrayList<>();
      StringBuilder text = new StringBuilder();
      for (int i = random.nextInt(6); i >= 0; i--) {
        String line = "{\"n\":" + random.nextInt(1000) + ",\"t\":\"" + "ab°\uD83D\uDE04".repeat(random.nextInt(4))
            + "\"}";
        lines.add(line);
        text.append(line).append(random.nextBoolean() ? "\n" : "\r\n").append(random.nextInt(4) == 0 ? "\n" : "");
      }
      byte[] bytes = utf8(text.toString());
      for (int cutting = 0; cutting < 20; cutting++) {
        List<byte[]> chunks = new ArrayList<>();
        for (int i = 0; i < bytes.length; ) {
          int n = Math.min(bytes.length - i, 1 + random.nextInt(9));
          chunks.add(Arrays.copyOfRange(bytes, i, i + n));
          i += n;
        }
        assertThat(decode(JsonLines.builder().build(), chunks.toArray(new byte[0][])))
            .as("stream %d, cutting %d", stream, cutting).isEqualTo(lines);
      }
    }
  }

  @Test
  void aLineOverTheLimitFailsAndSaysHowToRaiseIt() {
    byte[] line = utf8("{\"t\":\"" + "x".repeat(100) + "\"}\n");
    StepVerifier.create(JsonLines.builder().maxLineBytes(64).build().lines(Flux.just(Unpooled.wrappedBuffer(line))))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(EventTooLargeException.class).hasMessageContaining("64 bytes")
              .hasMessageContaining("maxLineBytes");
          assertThat(((EventTooLargeException) e).source()).isEqualTo("ndjson-decoder");
        })
        .verify(VERIFY);
    assertThatThrownBy(() -> JsonLines.builder().maxLineBytes(8).build()).hasMessageContaining("at least 16");
  }

  @Test
  void sixteenBytesIsTheSmallestLimitAccepted() {
    assertThatThrownBy(() -> JsonLines.builder().maxLineBytes(15).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxLineBytes is 15: give at least 16 bytes (the default is 8 MiB)");
    JsonLines smallest = JsonLines.builder().maxLineBytes(16).build();
    assertThat(smallest.maxLineBytes()).isEqualTo(16);
    assertThat(decode(smallest, utf8("{\"t\":\"01234567\"}\n"))).containsExactly("{\"t\":\"01234567\"}");
    assertThat(JsonLines.builder().build().maxLineBytes()).isEqualTo(JsonLines.DEFAULT_MAX_LINE_BYTES)
        .isEqualTo(8 << 20);
  }

  @Test
  void buffersAreNeitherRetainedNorReleased() {
    ByteBuf buffer = Unpooled.wrappedBuffer(utf8("{\"a\":1}\n"));
    assertThat(JsonLines.decode(Flux.just(buffer)).collectList().block(VERIFY)).containsExactly("{\"a\":1}");
    assertThat(buffer.refCnt()).isEqualTo(1);
    assertThat(buffer.readerIndex()).isZero();
  }
}
