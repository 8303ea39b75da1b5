package io.breakwater.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link ServerSentEvent} as a value: what its factories normalise, refuse, compare and print. */
class ServerSentEventTest {

  @Test
  void anEventWithoutTypeIdOrRetryGetsTheDefaults() {
    ServerSentEvent bare = ServerSentEvent.of(null, "d", null, -5);

    assertThat(bare.event()).isEqualTo("message");
    assertThat(bare.id()).isEmpty();
    assertThat(bare.retry()).isEqualTo(-1);
    assertThat(bare.isComment()).isFalse();
    assertThat(ServerSentEvent.of("", "d", "7", 0)).satisfies(e -> {
      assertThat(e.event()).isEqualTo("message");
      assertThat(e.id()).isEqualTo("7");
      assertThat(e.retry()).as("a retry of 0 ms is a retry").isZero();
    });
  }

  @Test
  void aCommentKeepsTheIdAndRetryInForceAndHasNoType() {
    ServerSentEvent comment = ServerSentEvent.comment("keep-alive", "42", 0);

    assertThat(comment.isComment()).isTrue();
    assertThat(comment.event()).isEmpty();
    assertThat(comment.data()).isEqualTo("keep-alive");
    assertThat(comment.id()).isEqualTo("42");
    assertThat(comment.retry()).isZero();
    assertThat(ServerSentEvent.comment("", null, -3)).satisfies(e -> {
      assertThat(e.id()).isEmpty();
      assertThat(e.retry()).isEqualTo(-1);
    });
  }

  @Test
  void missingDataOrTextIsRefusedByName() {
    assertThatThrownBy(() -> ServerSentEvent.of("message", null, "", -1))
        .isInstanceOf(NullPointerException.class).hasMessage("data");
    assertThatThrownBy(() -> ServerSentEvent.comment(null, "", -1))
        .isInstanceOf(NullPointerException.class).hasMessage("text");
  }

  @Test
  void eventsAreEqualOnlyWhenEveryFieldIs() {
    ServerSentEvent event = ServerSentEvent.of("delta", "d", "1", 5);

    assertThat(event).isEqualTo(ServerSentEvent.of("delta", "d", "1", 5))
        .hasSameHashCodeAs(ServerSentEvent.of("delta", "d", "1", 5))
        .isNotEqualTo(ServerSentEvent.of("other", "d", "1", 5))
        .isNotEqualTo(ServerSentEvent.of("delta", "e", "1", 5))
        .isNotEqualTo(ServerSentEvent.of("delta", "d", "2", 5))
        .isNotEqualTo(ServerSentEvent.of("delta", "d", "1", 6))
        .isNotEqualTo("d")
        .isNotEqualTo(null);
    assertThat(ServerSentEvent.comment("d", "1", 5)).isNotEqualTo(ServerSentEvent.of(null, "d", "1", 5));
  }

  @Test
  void distinctEventsHaveDistinctHashCodes() {
    Set<Integer> hashes = new HashSet<>();
    for (int i = 0; i < 100; i++) {
      hashes.add(ServerSentEvent.message("token " + i).hashCode());
    }
    assertThat(hashes).hasSize(100);
  }

  @Test
  void itsTextShowsEveryFieldOfAnEventAndOnlyTheTextOfAComment() {
    assertThat(ServerSentEvent.of("delta", "{}", "9", 3000))
        .hasToString("ServerSentEvent{event=delta, data={}, id=9, retry=3000}");
    assertThat(ServerSentEvent.comment("ping", "9", 3000)).hasToString("ServerSentEvent{comment=ping}");
  }
}
