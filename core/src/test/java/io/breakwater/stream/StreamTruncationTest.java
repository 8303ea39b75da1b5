package io.breakwater.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.failure.FailureKind;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** {@link StreamTruncatedException} and {@link StreamTruncatedByTimeoutException}: what they carry and say. */
class StreamTruncationTest {

  @Test
  void aStreamThatEndedWithoutItsTerminalEventIsAConnectionFailureWithWhatItDelivered() {
    StreamTruncatedException e = new StreamTruncatedException("llm:openai_chat", "Hello wor", 3, null);

    assertThat(e.failureKind()).isEqualTo(FailureKind.CONNECTION);
    assertThat(e.source()).isEqualTo("llm:openai_chat");
    assertThat(e.partialOutput()).isEqualTo("Hello wor");
    assertThat(e.itemsDelivered()).isEqualTo(3);
    assertThat(e.partialResult()).isNull();
    assertThat(e).hasNoCause().hasMessage("Stream from llm:openai_chat ended without its terminal event after 3 "
        + "items (9 chars of partial output attached)");
    assertThat(e.getStackTrace()).isEmpty();
  }

  @Test
  void aStreamCutByAFailureTakesItsKindAndQuotesItsMessage() {
    TimeoutException cause = new TimeoutException("no bytes\nforged line");

    StreamTruncatedException e = new StreamTruncatedException("llm:ollama", "", 0, cause);

    assertThat(e.failureKind()).isEqualTo(FailureKind.TIMEOUT);
    assertThat(e).hasCause(cause).hasMessage("Stream from llm:ollama failed: TimeoutException: no bytes\\nforged line "
        + "after 0 items (0 chars of partial output attached)");
  }

  @Test
  void aStreamCutByATimeoutIsATimeoutExceptionWithWhatItDelivered() {
    IdleTimeoutException stall = new IdleTimeoutException(Duration.ofSeconds(3), Duration.ofSeconds(3));
    Object partial = new Object();

    StreamTruncatedByTimeoutException e =
        new StreamTruncatedByTimeoutException("llm:anthropic", "Once upon", 7, partial, stall);

    assertThat(e).isInstanceOf(TimeoutException.class).hasCause(stall)
        .hasMessage("Stream from llm:anthropic failed: IdleTimeoutException: Stream made no progress for 3s "
            + "(idle timeout 3s) after 7 items (9 chars of partial output attached)");
    assertThat(e.failureKind()).isEqualTo(FailureKind.TIMEOUT);
    assertThat(e.source()).isEqualTo("llm:anthropic");
    assertThat(e.partialOutput()).isEqualTo("Once upon");
    assertThat(e.itemsDelivered()).isEqualTo(7);
    assertThat(e.partialResult()).isSameAs(partial);
    assertThat(e.getStackTrace()).isEmpty();
  }

  @Test
  void aMissingSourceOutputOrKindIsRefusedByName() {
    assertThatThrownBy(() -> new StreamTruncatedException(null, "", 0, null))
        .isInstanceOf(NullPointerException.class).hasMessage("source");
    assertThatThrownBy(() -> new StreamTruncatedException("s", null, 0, null))
        .isInstanceOf(NullPointerException.class).hasMessage("partialOutput");
    assertThatThrownBy(() -> new StreamTruncatedException("s", "", 0, null, null, null))
        .isInstanceOf(NullPointerException.class).hasMessage("kind");
  }
}
