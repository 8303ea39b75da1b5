package io.breakwater.internal.stream.llm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LlmCallTest {

  @Test
  void aLastEventIdIsSentBackWhenItIsPrintableAsciiOfOneTo256Characters() {
    assertThat(LlmCall.isPrintable("")).isFalse();
    assertThat(LlmCall.isPrintable("x".repeat(LlmCall.MAX_EVENT_ID_CHARS))).isTrue();
    assertThat(LlmCall.isPrintable("x".repeat(LlmCall.MAX_EVENT_ID_CHARS + 1))).isFalse();
    assertThat(LlmCall.isPrintable(" ~")).as("0x20 and 0x7e, the ends of printable ASCII").isTrue();
    assertThat(LlmCall.isPrintable("a\u001fb")).isFalse();
    assertThat(LlmCall.isPrintable("a\u007fb")).isFalse();
    assertThat(LlmCall.isPrintable("caf\u00e9")).isFalse();
  }
}
