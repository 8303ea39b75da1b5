package io.breakwater.issues;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.stream.EventTooLargeException;
import io.breakwater.stream.ServerSentEvents;
import io.breakwater.testing.SignalRecorder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * Review defect 8: the SSE parser collected the events of a buffer and threw {@link EventTooLargeException} before
 * returning them, so {@code data: a\n\ndata: <over the limit>\n\n} in one buffer gave only the error, while the same
 * bytes in two buffers gave event {@code a}, then the error. What the subscriber sees must never depend on how TCP
 * split the bytes, errors included.
 */
class SseEventBeforeOversizedLineIncidentTest {

  static final int LIMIT = 64;
  static final byte[] STREAM = ("data: a\n\ndata: b\n\ndata: " + "x".repeat(2 * LIMIT) + "\n\n")
      .getBytes(StandardCharsets.UTF_8);

  static List<String> decode(List<ByteBuf> buffers) {
    SignalRecorder<String> subscriber = new SignalRecorder<>(Long.MAX_VALUE, (self, data) -> {});
    ServerSentEvents.builder().maxEventBytes(LIMIT).build().events(Flux.fromIterable(buffers))
        .map(e -> e.data())
        .subscribe(subscriber);
    return subscriber.signals();
  }

  @Test
  void eventsCompleteBeforeAnOversizedLineInTheSameBufferAreDeliveredBeforeTheError() {
    assertThat(decode(List.of(Unpooled.wrappedBuffer(STREAM))))
        .containsExactly("a", "b", "error: " + EventTooLargeException.class.getSimpleName());
  }

  @Test
  void everySplitOfTheBytesGivesTheSameSignals() {
    List<String> whole = decode(List.of(Unpooled.wrappedBuffer(STREAM)));
    for (int cut = 0; cut <= STREAM.length; cut++) {
      List<ByteBuf> two = new ArrayList<>();
      two.add(Unpooled.wrappedBuffer(STREAM, 0, cut));
      two.add(Unpooled.wrappedBuffer(STREAM, cut, STREAM.length - cut));
      assertThat(decode(two)).as("cut at %d", cut).isEqualTo(whole);
    }
  }
}
