package io.breakwater.stream;

import static io.breakwater.Breakwater.streamTimeouts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** {@link StreamTimeouts.Builder}: where each timeout comes from, what it refuses, and how the result describes itself. */
class StreamTimeoutsBuilderTest {

  @Test
  void eachTimeoutIsFixedOrFromTheDeadlineWhicheverWasSetLast() {
    StreamTimeouts fromDeadline = StreamTimeouts.builder().firstItem(Duration.ofSeconds(5)).firstItemFromDeadline()
        .idle(Duration.ofSeconds(3)).build();
    StreamTimeouts fixed = StreamTimeouts.builder().firstItemFromDeadline().firstItem(Duration.ofSeconds(5))
        .idleFromDeadline().idle(Duration.ofSeconds(3)).build();
    StreamTimeouts idleFromDeadline = StreamTimeouts.builder().idle(Duration.ofSeconds(3)).idleFromDeadline().build();

    assertThat(fromDeadline.firstItemFromDeadline()).isTrue();
    assertThat(fromDeadline.firstItem()).isNull();
    assertThat(fromDeadline.idleFromDeadline()).isFalse();
    assertThat(fixed.firstItemFromDeadline()).isFalse();
    assertThat(fixed.firstItem()).isEqualTo(Duration.ofSeconds(5));
    assertThat(fixed.idleFromDeadline()).isFalse();
    assertThat(fixed.idle()).isEqualTo(Duration.ofSeconds(3));
    assertThat(idleFromDeadline.idleFromDeadline()).isTrue();
    assertThat(idleFromDeadline.idle()).isNull();
    assertThat(idleFromDeadline.firstItemFromDeadline()).isFalse();
  }

  @Test
  void itsTextSaysWhereEachTimeoutComesFromAndWhetherItIsCoarse() {
    assertThat(StreamTimeouts.builder().firstItemFromDeadline().idle(Duration.ofSeconds(3)).build())
        .hasToString("StreamTimeouts{firstItem=deadline, idle=PT3S}");
    assertThat(StreamTimeouts.builder().firstItem(Duration.ofSeconds(30)).idleFromDeadline().coarse().build())
        .hasToString("StreamTimeouts{firstItem=PT30S, idle=deadline, coarse}");
    assertThat(StreamTimeouts.builder().idle(Duration.ofMillis(500)).build())
        .hasToString("StreamTimeouts{firstItem=null, idle=PT0.5S}");
  }

  @Test
  void aMissingOrNonPositiveSettingIsRefusedByName() {
    StreamTimeouts.Builder builder = StreamTimeouts.builder();
    assertThatThrownBy(() -> builder.firstItem(null)).isInstanceOf(NullPointerException.class)
        .hasMessage("firstItem");
    assertThatThrownBy(() -> builder.idle(Duration.ofNanos(-1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("idle timeout is PT-0.000000001S: give a positive duration");
    assertThatThrownBy(() -> builder.firstItem(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("firstItem timeout is PT0S: give a positive duration");
    assertThatThrownBy(() -> builder.scheduler(null)).isInstanceOf(NullPointerException.class)
        .hasMessage("scheduler");
    assertThatThrownBy(() -> builder.meterRegistry(null)).isInstanceOf(NullPointerException.class)
        .hasMessage("meterRegistry");
  }

  @Test
  void aTimeoutOfCenturiesMeansNeverRatherThanAnOverflow() {
    Duration centuries = Duration.ofDays(365L * 300);
    StreamTimeouts exact = StreamTimeouts.builder().firstItem(centuries).idle(centuries).build();
    StreamTimeouts coarse = StreamTimeouts.builder().firstItem(centuries).idle(centuries).coarse().build();

    assertThat(exact.firstItemNanos(null)).isEqualTo(Long.MAX_VALUE);
    assertThat(exact.idleNanos(null)).isEqualTo(Long.MAX_VALUE);
    for (StreamTimeouts timeouts : new StreamTimeouts[] {exact, coarse}) {
      StepVerifier.withVirtualTime(() -> Flux.just("a", "b").concatWith(Flux.never())
              .transformDeferred(streamTimeouts(timeouts)))
          .expectSubscription()
          .expectNext("a", "b")
          .expectNoEvent(Duration.ofDays(365L * 200))
          .thenCancel()
          .verify(Duration.ofSeconds(5));
    }
  }
}
