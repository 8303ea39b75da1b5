package io.breakwater.internal.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.stream.ServerSentEvent;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The edges of {@link SseParser} that the mutation run (docs/reliability.md, "Mutation testing") found untested: an
 * event exactly at the limit, fields with an empty value after a longer one, digits 0 and 9 in {@code retry}, the
 * bytes held mid-event, and the buffers given back after a large event.
 */
class SseParserBoundariesTest {

  private static List<ServerSentEvent> feed(SseParser parser, String text) {
    List<ServerSentEvent> events = new ArrayList<>();
    parser.feed(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8)).forEach(events::add);
    return events;
  }

  @Test
  void aLineExactlyAsLongAsTheLimitIsAnEventNotAnError() {
    List<ServerSentEvent> events = feed(new SseParser(16, false), "data: 0123456789\n\n");
    assertThat(events).extracting(ServerSentEvent::data).containsExactly("0123456789");
  }

  @Test
  void aSecondDataLineThatBringsTheEventExactlyToTheLimitIsKept() {
    // "data: abcde" leaves 6 bytes of event data ("abcde\n"); the next line is 10 bytes: 16 in all
    List<ServerSentEvent> events = feed(new SseParser(16, false), "data: abcde\ndata: 1234\n\n");
    assertThat(events).extracting(ServerSentEvent::data).containsExactly("abcde\n1234");
  }

  @Test
  void anEmptyDataFieldAfterALongerLineAddsAnEmptyLine() {
    List<ServerSentEvent> events = feed(new SseParser(1024, false), "data: x\ndata:\n\n");
    assertThat(events).extracting(ServerSentEvent::data).containsExactly("x\n");
  }

  @Test
  void anEmptyRetryFieldAfterALongerOneKeepsTheRetry() {
    List<ServerSentEvent> events = feed(new SseParser(1024, false), "retry: 5\nretry:\ndata: x\n\n");
    assertThat(events).extracting(ServerSentEvent::retry).containsExactly(5L);
  }

  @Test
  void retryReadsEveryDigitFromZeroToNine() {
    List<ServerSentEvent> events = feed(new SseParser(1024, false), "retry: 1090\ndata: x\n\n");
    assertThat(events).extracting(ServerSentEvent::retry).containsExactly(1090L);
  }

  @Test
  void aRetryJustBelowTheLargestLongIsReadExactlyAndOneAboveItSaturates() {
    // 922337203685477579 is the last value that still takes a digit without saturating
    List<ServerSentEvent> events = feed(new SseParser(1024, false),
        "retry: 9223372036854775799\ndata: x\n\nretry: 9223372036854775808\ndata: y\n\n");
    assertThat(events).extracting(ServerSentEvent::retry).containsExactly(9223372036854775799L, Long.MAX_VALUE);
  }

  @Test
  void theBytesOfAnUnfinishedEventAreCountedWhileItIsAssembled() {
    SseParser parser = new SseParser(1024, false);
    assertThat(feed(parser, "data: abc\ndata: de")).isEmpty();
    assertThat(parser.bufferedBytes()).as("\"abc\\n\" assembled, \"data: de\" pending").isEqualTo(4 + 8);
    assertThat(parser.retainedBytes()).isGreaterThanOrEqualTo(12);
  }

  @Test
  void aLargeEventsBuffersAreGivenBackOnceItIsDelivered() {
    SseParser parser = new SseParser(1 << 20, false);
    String big = "x".repeat(200_000);
    assertThat(feed(parser, "data: " + big + "\n\n")).extracting(ServerSentEvent::data).containsExactly(big);
    assertThat(parser.retainedBytes()).as("capacity held between events").isLessThanOrEqualTo(64 * 1024);
  }
}
