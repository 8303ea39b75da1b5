package io.breakwater.internal.stream.llm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a server may echo of the client's own credentials never reaches an exception's text. */
class SecretMaskTest {

  @Test
  void credentialHeaderValuesAreMaskedWithAndWithoutTheirSchemeAndOtherHeadersAreNot() {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("X-Request-Id", "req-abcdef");
    headers.put("Authorization", "Bearer sk-live-123456");
    headers.put("x-api-key", " ak-98765 ");
    headers.put("X-Session", "abc");   // shorter than an echoed secret is taken to be: ordinary text
    headers.put("Cookie", "sid=s3cr3t");
    SecretMask mask = new SecretMask(headers);
    assertThat(mask.mask("Bearer sk-live-123456 rejected; sk-live-123456 unknown; ak-98765 revoked; "
            + "sid=s3cr3t expired; abc; request req-abcdef", null))
        .isEqualTo("[redacted] rejected; [redacted] unknown; [redacted] revoked; [redacted] expired; abc; "
            + "request req-abcdef");
  }

  @Test
  void aSecretOfFourCharactersIsMaskedAndOfThreeIsNot() {
    SecretMask mask = new SecretMask(Map.of("x-token", "wxyz", "x-key", "pqr"));
    assertThat(mask.mask("token wxyz, key pqr", null)).isEqualTo("token [redacted], key pqr");
  }

  @Test
  void theLongestSecretIsMaskedFirstSoNoPartOfItIsLeft() {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("x-api-key", "sk-abc123456");             // also the tail of the next header's value
    headers.put("Authorization", "Bearer sk-abc123456");
    assertThat(new SecretMask(headers).mask("got Bearer sk-abc123456", null)).isEqualTo("got [redacted]");
  }

  @Test
  void sensitiveFieldsOfTheRequestAreMaskedToo() throws Exception {
    SecretMask mask = new SecretMask(Map.of());
    assertThat(mask.mask("echo: hunter2-long", new ObjectMapper().readTree("{\"password\":\"hunter2-long\"}")))
        .doesNotContain("hunter2-long");
    assertThat(mask.mask("nothing to hide", null)).isEqualTo("nothing to hide");
  }

  @Test
  void aMebibyteOfServerTextIsCutBeforeItIsMaskedAndACutSecretLeavesNoPrefix() {
    String key = "ak-0123456789";
    SecretMask mask = new SecretMask(Map.of("x-api-key", key));
    String event = "a=".repeat(1 << 19);
    assertThat(mask.mask(event, null)).hasSize(SecretMask.MAX_MASKED_CHARS + 1).endsWith("…");
    // the secret straddles the cut: its first characters would be kept, so they are dropped with it
    String straddling = "x".repeat(SecretMask.MAX_MASKED_CHARS - 5) + key + " rest";
    assertThat(mask.mask(straddling, null)).isEqualTo("x".repeat(SecretMask.MAX_MASKED_CHARS - 5) + "…");
  }
}
