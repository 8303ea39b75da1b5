package io.breakwater.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The UTF-8 size of text, which bounds idempotent results ({@code maxResultBytes}) and LLM responses. */
class Utf8Test {

  @Test
  void theLengthOfValidTextIsItsUtf8LengthAtEveryWidthsEdge() {
    for (String s : List.of("", "a", "\u007f", "\u0080", "h\u00e9llo", "\u07ff", "\u0800", "\u20ac", "\uffee",
        "\uffff", "\ud83d\ude00", "\udbff\udfff", "a\ud83d\ude00b\u4e2d")) {
      assertThat(Utf8.length(s)).as(s).isEqualTo(s.getBytes(StandardCharsets.UTF_8).length);
    }
  }

  @Test
  void aLoneSurrogateCountsAsItsReplacementCharacterAndNullAsNothing() {
    // U+FFFD, what an encoder makes of a lone surrogate, is 3 bytes
    assertThat(Utf8.length("\ud83d")).isEqualTo(3);
    assertThat(Utf8.length("\ude00")).isEqualTo(3);
    assertThat(Utf8.length("\ud83dx")).isEqualTo(4);
    assertThat(Utf8.length("\ude00\ud83d")).as("a low then a high surrogate is no pair").isEqualTo(6);
    assertThat(Utf8.length(null)).isZero();
  }
}
