package io.breakwater.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * The WHATWG event-stream rules, each as a test vector decoded whole, cut at every byte position, cut at every pair
 * of positions and fed byte by byte: the chunking must never change the events.
 */
class ServerSentEventsTest {

  private static ServerSentEvent event(String type, String data, String id, long retry) {
    return ServerSentEvent.of(type, data, id, retry);
  }

  private static ServerSentEvent message(String data) {
    return ServerSentEvent.message(data);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static List<ServerSentEvent> decode(ServerSentEvents decoder, List<byte[]> chunks) {
    return decoder.events(Flux.fromIterable(chunks).map(Unpooled::wrappedBuffer)).collectList()
        .block(Duration.ofSeconds(5));
  }

  /** Every way of cutting {@code bytes} into one, two, three (short vectors) and single-byte chunks. */
  static List<List<byte[]>> cuttings(byte[] bytes) {
    List<List<byte[]>> all = new ArrayList<>();
    all.add(List.of(bytes));
    for (int i = 0; i <= bytes.length; i++) {
      all.add(List.of(Arrays.copyOfRange(bytes, 0, i), Arrays.copyOfRange(bytes, i, bytes.length)));
    }
    if (bytes.length <= 64) {
      for (int i = 0; i <= bytes.length; i++) {
        for (int j = i; j <= bytes.length; j++) {
          all.add(List.of(Arrays.copyOfRange(bytes, 0, i), Arrays.copyOfRange(bytes, i, j),
              Arrays.copyOfRange(bytes, j, bytes.length)));
        }
      }
    }
    List<byte[]> single = new ArrayList<>();
    for (byte b : bytes) {
      single.add(new byte[] {b});
    }
    all.add(single);
    return all;
  }

  private static void assertDecodes(ServerSentEvents decoder, byte[] stream, ServerSentEvent... expected) {
    for (List<byte[]> chunks : cuttings(stream)) {
      assertThat(decode(decoder, chunks))
          .as("cut into %s", chunks.stream().map(c -> new String(c, StandardCharsets.UTF_8)).toList())
          .containsExactly(expected);
    }
  }

  private static void assertDecodes(String stream, ServerSentEvent... expected) {
    assertDecodes(ServerSentEvents.defaults(), utf8(stream), expected);
  }

  @Test
  void lfCrAndCrlfLineEndingsAllEndLines() {
    assertDecodes("data: a\n\n", message("a"));
    assertDecodes("data: a\r\r", message("a"));
    assertDecodes("data: a\r\n\r\n", message("a"));
    assertDecodes("data: a\r\ndata: b\rdata: c\n\r\n", message("a\nb\nc"));
  }

  @Test
  void crlfSplitAcrossChunksIsOneLineEnding() {
    // "\r" then "\n" in the next chunk must not count as two line endings (which would dispatch early).
    List<byte[]> chunks = List.of(utf8("data: a\r"), utf8("\ndata: b\r"), utf8("\n\r"), utf8("\n"));
    assertThat(decode(ServerSentEvents.defaults(), chunks)).containsExactly(message("a\nb"));
    assertDecodes("data: a\r\ndata: b\r\n\r\n", message("a\nb"));
  }

  @Test
  void crAtTheEndOfAChunkFollowedByAnotherLineIsALineEnding() {
    List<byte[]> chunks = List.of(utf8("data: a\r"), utf8("\r"), utf8("data: b\r"), utf8(""), utf8("\r"));
    assertThat(decode(ServerSentEvents.defaults(), chunks)).containsExactly(message("a"), message("b"));
  }

  @Test
  void oneLeadingBomIsStripped() {
    assertDecodes("\uFEFFdata: a\n\n", message("a"));
  }

  @Test
  void aSecondBomIsPartOfTheFieldName() {
    assertDecodes("\uFEFF\uFEFFdata: a\n\ndata: b\n\n", message("b"));
  }

  @Test
  void aBomAfterTheStartIsNotStripped() {
    assertDecodes("data: a\n\n\uFEFFdata: b\n\ndata: c\n\n", message("a"), message("c"));
  }

  @Test
  void commentsAreNotEvents() {
    assertDecodes(": hello\ndata: a\n:\n\n: bye\n\n", message("a"));
  }

  @Test
  void commentsAreItemsWhenAskedFor() {
    ServerSentEvents decoder = ServerSentEvents.builder().comments(true).build();
    assertDecodes(decoder, utf8(": hello\ndata: a\n:\n\n:  two spaces\n\n"),
        ServerSentEvent.comment("hello", "", -1), ServerSentEvent.comment("", "", -1), message("a"),
        ServerSentEvent.comment(" two spaces", "", -1));
    assertThat(ServerSentEvent.comment("x", "", -1).isHeartbeat()).isTrue();
  }

  @Test
  void aFieldWithoutAColonHasAnEmptyValue() {
    assertDecodes("data\n\n", message(""));
    assertDecodes("data\ndata\n\n", message("\n"));
    assertDecodes("event\ndata: a\n\n", message("a"));
  }

  @Test
  void oneLeadingSpaceOfTheValueIsStripped() {
    assertDecodes("data:a\n\n", message("a"));
    assertDecodes("data: a\n\n", message("a"));
    assertDecodes("data:  a \n\n", message(" a "));
    assertDecodes("data:\n\n", message(""));
    assertDecodes("data: \n\n", message(""));
  }

  @Test
  void onlyTheFirstColonSeparatesFieldAndValue() {
    assertDecodes("data: a: b:c\n\n", message("a: b:c"));
  }

  @Test
  void multiLineDataIsJoinedWithLf() {
    assertDecodes("data: one\ndata: two\ndata:\ndata: four\n\n", message("one\ntwo\n\nfour"));
  }

  @Test
  void eventTypeDefaultsToMessageAndResetsAfterEachEvent() {
    assertDecodes("event: add\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n",
        event("add", "1", "", -1), message("2"), message("3"));
  }

  @Test
  void anEventWithoutDataIsNotDispatchedAndItsTypeIsReset() {
    assertDecodes("event: add\n\ndata: x\n\n", message("x"));
    assertDecodes("event: add\nid: 1\n\n\n\n");
  }

  @Test
  void theLastEventIdPersistsAcrossEventsAndAnEmptyIdResetsIt() {
    assertDecodes("id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 8\n\ndata: d\n\n",
        event("message", "a", "7", -1), event("message", "b", "7", -1), event("message", "c", "", -1),
        event("message", "d", "8", -1));
  }

  @Test
  void anIdContainingNulIsIgnored() {
    assertDecodes("id: 1\ndata: a\n\nid: 2\u0000x\ndata: b\n\n",
        event("message", "a", "1", -1), event("message", "b", "1", -1));
  }

  @Test
  void retryIsAcceptedOnlyWhenAllDigits() {
    assertDecodes("retry: 1500\ndata: a\n\nretry: 15x\ndata: b\n\nretry: -1\nretry: 2.5\nretry:\nretry\ndata: c\n\n"
            + "retry:300\ndata: d\n\nretry:  400\ndata: e\n\n",
        event("message", "a", "", 1500), event("message", "b", "", 1500), event("message", "c", "", 1500),
        event("message", "d", "", 300), event("message", "e", "", 300));
  }

  @Test
  void unknownFieldsAndFieldsWithSpacesAreIgnored() {
    assertDecodes("foo: bar\ndata : x\n DATA: y\nData: z\ndata: a\n\n", message("a"));
  }

  @Test
  void anUnterminatedFinalEventIsDiscarded() {
    assertDecodes("data: a\n\ndata: b\n", message("a"));
    assertDecodes("data: a\n\ndata: b", message("a"));
    assertDecodes("data: a\n\nevent: x\ndata: b\r", message("a"));
  }

  @Test
  void utf8CodePointsSplitAcrossChunksDecode() {
    assertDecodes("event: ünïcödé\ndata: é€😀 中文\nid: ж\n\n", event("ünïcödé", "é€😀 中文", "ж", -1));
  }

  @Test
  void invalidUtf8BecomesReplacementCharacters() {
    byte[] bytes = {'d', 'a', 't', 'a', ':', ' ', (byte) 0xC3, 'x', (byte) 0xFF, '\n', '\n'};
    assertDecodes(ServerSentEvents.defaults(), bytes, message("\uFFFDx\uFFFD"));
  }

  @Test
  void aLineOverTheLimitFailsWithATypedErrorNamingTheLimit() {
    ServerSentEvents decoder = ServerSentEvents.builder().maxEventBytes(64).build();
    byte[] longLine = utf8("data: " + "x".repeat(100));
    for (List<byte[]> chunks : cuttings(longLine)) {
      assertThatThrownBy(() -> decode(decoder, chunks))
          .isInstanceOf(EventTooLargeException.class)
          .hasMessageContaining("64 bytes")
          .hasMessageContaining("maxEventBytes");
    }
  }

  @Test
  void anEventOverTheLimitFailsEvenWhenEachLineFits() {
    ServerSentEvents decoder = ServerSentEvents.builder().maxEventBytes(64).build();
    byte[] manyLines = utf8("data: 0123456789\n".repeat(10) + "\n");
    StepVerifier.create(decoder.events(Flux.just(Unpooled.wrappedBuffer(manyLines))))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(EventTooLargeException.class);
          assertThat(((EventTooLargeException) e).limit()).isEqualTo(64);
          assertThat(FailureClassifier.defaults().classify(e)).isEqualTo(FailureKind.INVALID_ARGUMENT);
        })
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void manyEventsUnderTheLimitPassWhateverTheirTotal() {
    ServerSentEvents decoder = ServerSentEvents.builder().maxEventBytes(64).build();
    Flux<ByteBuf> chunks = Flux.range(0, 10_000).map(i -> Unpooled.wrappedBuffer(utf8("data: " + i + "\n\n")));
    StepVerifier.create(decoder.events(chunks).count()).expectNext(10_000L).verifyComplete();
  }

  @Test
  void theLimitIsValidated() {
    assertThatThrownBy(() -> ServerSentEvents.builder().maxEventBytes(0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxEventBytes is 0");
  }

  @Test
  void sixteenBytesIsTheSmallestLimitAccepted() {
    assertThatThrownBy(() -> ServerSentEvents.builder().maxEventBytes(15).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxEventBytes is 15: give at least 16 bytes (the default is 8 MiB)");
    assertDecodes(ServerSentEvents.builder().maxEventBytes(16).build(), utf8("data: 0123456789\n\n"),
        message("0123456789"));
  }

  @Test
  void aDecoderReportsItsSettings() {
    ServerSentEvents decoder = ServerSentEvents.builder().maxEventBytes(1024).comments(true).build();
    assertThat(decoder.maxEventBytes()).isEqualTo(1024);
    assertThat(decoder.comments()).isTrue();
    assertThat(ServerSentEvents.defaults().maxEventBytes()).isEqualTo(ServerSentEvents.DEFAULT_MAX_EVENT_BYTES)
        .isEqualTo(8 << 20);
    assertThat(ServerSentEvents.defaults().comments()).isFalse();
  }

  @Test
  void eachSubscriptionDecodesAfresh() {
    Flux<ServerSentEvent> events = ServerSentEvents.decode(
        Flux.defer(() -> Flux.just(Unpooled.wrappedBuffer(utf8("id: 1\ndata: a\n\ndata: b")))));
    assertThat(events.collectList().block()).containsExactly(event("message", "a", "1", -1));
    assertThat(events.collectList().block()).containsExactly(event("message", "a", "1", -1));
  }

  @Test
  void honoursBackpressureOnEventsWithinOneChunk() {
    Flux<ByteBuf> oneChunk = Flux.just(Unpooled.wrappedBuffer(utf8("data: 1\n\ndata: 2\n\ndata: 3\n\n")));
    StepVerifier.create(ServerSentEvents.decode(oneChunk).map(ServerSentEvent::data), 1)
        .expectNext("1")
        .thenRequest(1)
        .expectNext("2")
        .thenRequest(1)
        .expectNext("3")
        .verifyComplete();
  }

  /** Property: for random streams, random chunking never changes the decoded events. */
  @Test
  void randomChunkingNeverChangesTheEvents() {
    ServerSentEvents decoder = ServerSentEvents.builder().comments(true).build();
    long seed0 = 0x5EED_0006L;
    for (int round = 0; round < 500; round++) {
      long seed = seed0 + round;
      SplittableRandom random = new SplittableRandom(seed);
      byte[] stream = randomStream(random);
      List<ServerSentEvent> whole = decode(decoder, List.of(stream));
      for (int cut = 0; cut < 20; cut++) {
        List<byte[]> chunks = new ArrayList<>();
        int i = 0;
        while (i < stream.length) {
          int n = 1 + random.nextInt(random.nextBoolean() ? 4 : 64);
          chunks.add(Arrays.copyOfRange(stream, i, Math.min(stream.length, i + n)));
          i += n;
        }
        assertThat(decode(decoder, chunks)).as("seed %d, cutting %d", seed, cut).isEqualTo(whole);
      }
    }
  }

  private static final String[] FIELDS = {"data", "data", "data", "event", "id", "retry", ":", "foo", ""};
  private static final String[] VALUES = {"", " ", "a", " hello", "é€😀", "12", "x\u0000y", "[DONE]", ": z"};
  private static final String[] ENDINGS = {"\n", "\r", "\r\n"};

  private static byte[] randomStream(SplittableRandom random) {
    StringBuilder s = new StringBuilder(random.nextInt(4) == 0 ? "\uFEFF" : "");
    int lines = random.nextInt(40);
    for (int i = 0; i < lines; i++) {
      String field = FIELDS[random.nextInt(FIELDS.length)];
      if (!field.isEmpty()) {
        s.append(field);
        if (random.nextInt(5) != 0) {
          s.append(':').append(VALUES[random.nextInt(VALUES.length)]);
        }
      }
      s.append(ENDINGS[random.nextInt(ENDINGS.length)]);
    }
    return utf8(s.toString());
  }
}
