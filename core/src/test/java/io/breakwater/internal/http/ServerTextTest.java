package io.breakwater.internal.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ServerTextTest {

  @Test
  void lineBreaksAndOtherControlCharactersAreEscapedSoNoLogLineCanBeForged() {
    assertThat(ServerText.quote("bad\r\nINFO admin logged in\t\u0007\u2028"))
        .isEqualTo("bad\\r\\nINFO admin logged in\\t\\u0007\\u2028");
  }

  @Test
  void longTextIsCutToTwoHundredCharacters() {
    String quoted = ServerText.quote("x".repeat(2_000_000));
    assertThat(quoted).hasSize(ServerText.MAX_CHARS + 1).endsWith("…");
  }

  @Test
  void ordinaryTextIsKeptAsItIs() {
    assertThat(ServerText.quote("Overloaded — try again, Zürich")).isEqualTo("Overloaded — try again, Zürich");
  }

  @Test
  void theCutNeverSplitsASurrogatePairNorAnEscapeAndNeverRunsPastTheLimit() {
    String emoji = "\uD83D\uDE00";
    String pairAtTheCut = ServerText.quote("x".repeat(199) + emoji + "tail");
    assertThat(pairAtTheCut).isEqualTo("x".repeat(199) + "…");
    String pairBeforeTheCut = ServerText.quote("x".repeat(198) + emoji + "tail");
    assertThat(pairBeforeTheCut).isEqualTo("x".repeat(198) + emoji + "…");

    String escapeAtTheCut = ServerText.quote("x".repeat(199) + "\u0007tail");
    assertThat(escapeAtTheCut).as("a six-character escape that would not fit is left out whole")
        .isEqualTo("x".repeat(199) + "…");
    assertThat(ServerText.quote("\u0007".repeat(100))).hasSizeLessThanOrEqualTo(ServerText.MAX_CHARS + 1)
        .isEqualTo("\\u0007".repeat(33) + "…");
  }

  @Test
  void aLoneSurrogateIsEscapedSoTheMessageIsValidText() {
    assertThat(ServerText.quote("a\uD800b\uDC00c")).isEqualTo("a\\ud800b\\udc00c");
    assertThat(ServerText.quote("end\uD83D")).isEqualTo("end\\ud83d");
  }
}
