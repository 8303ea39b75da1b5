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
}
