package io.breakwater.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.internal.agent.Redactor;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RedactorTest {

  final Redactor redactor = new Redactor(List.of("iban"));

  @Test
  void namesMatchInAnySpelling() {
    assertThat(redactor.sensitive("apiKey")).isTrue();
    assertThat(redactor.sensitive("API_KEY")).isTrue();
    assertThat(redactor.sensitive("api-key")).isTrue();
    assertThat(redactor.sensitive("IBAN")).isTrue();
    assertThat(redactor.sensitive("city")).isFalse();
  }

  /** Issue 15, high 3: the usual credential names were missed, because names had to equal a listed one. */
  @Test
  void aNameIsSensitiveWhenItContainsASensitiveTerm() {
    for (String name : List.of("access_token", "refresh_token", "client_secret", "x-api-key", "private_key",
        "privateKey", "X-Auth-Token", "sessionId", "Set-Cookie", "db_password", "passwd", "userCredentials",
        "Authorization", "oauth_state", "creditCardNumber", "SSN")) {
      assertThat(redactor.sensitive(name)).as(name).isTrue();
    }
    for (String name : List.of("city", "query", "className", "date", "displayName")) {
      assertThat(redactor.sensitive(name)).as(name).isFalse();
    }
  }

  @Test
  void credentialsInsideTextAreMaskedWhateverCharacterPrecedesTheirName() {
    assertThat(redactor.redactText("GET /cb?code=1&access_token=at-123&state=x failed; client_secret=cs-456, "
        + "x-api-key: sk-ant-789; X_REFRESH_TOKEN=rt-0"))
        .isEqualTo("GET /cb?code=1&access_token=[redacted]&state=x failed; client_secret=[redacted], "
            + "x-api-key: [redacted]; X_REFRESH_TOKEN=[redacted]");
  }

  @Test
  void quotedValuesAreMaskedWholeEscapesIncluded() {
    assertThat(redactor.redactText("{\"password\":\"a\\\"b\",\"user\":\"bob\"}"))
        .isEqualTo("{\"password\":[redacted],\"user\":\"bob\"}");
    assertThat(redactor.redactText("apiKey='two words' rejected")).isEqualTo("apiKey=[redacted] rejected");
    assertThat(redactor.redactText("private_key='it\\'s long' and 'session' : \"s-1 2\""))
        .isEqualTo("private_key=[redacted] and 'session' : [redacted]");
    assertThat(redactor.redactText("cut: \"token\":\"unterminated \\\" secret"))
        .isEqualTo("cut: \"token\":[redacted]");
    assertThat(redactor.redactText("Cookie: sid=abc; theme=dark\nnext line"))
        .isEqualTo("Cookie: [redacted]\nnext line");
  }

  @Test
  void nestedFieldsAndArraysAreMasked() {
    Object args = Map.of("user", Map.of("name", "ana", "password", "hunter2"),
        "cards", List.of(Map.of("cardNumber", "4111111111111111")), "iban", "FR76");
    assertThat(redactor.redactTree(args).toString())
        .contains("\"password\":\"[redacted]\"", "\"cardNumber\":\"[redacted]\"", "\"iban\":\"[redacted]\"",
            "\"name\":\"ana\"")
        .doesNotContain("hunter2", "4111", "FR76");
  }

  @Test
  void secretsInFreeTextAreMasked() {
    assertThat(redactor.redactText("401 for Authorization: Bearer xyz and api_key=k-1, \"token\":\"t-2\" ok"))
        .isEqualTo("401 for Authorization: [redacted] and api_key=[redacted], \"token\":[redacted] ok");
    assertThat(redactor.redactText("no secrets here")).isEqualTo("no secrets here");
  }

  @Test
  void valuesOfSensitiveFieldsAreMaskedWhereAMessageRepeatsThemWithoutTheirName() {
    Object args = Map.of("iban", "FR7630006000011234567890189", "auth", Map.of("token", "tok-abc", "secret", "42"),
        "city", "Lyon", "password", "tok-abc-longer");
    assertThat(redactor.redactText("no account FR7630006000011234567890189 in Lyon; tok-abc-longer and tok-abc "
        + "refused; pin 42", args))
        .isEqualTo("no account [redacted] in Lyon; [redacted] and [redacted] refused; pin 42");
    // values under a sensitive name are masked at any depth; values shorter than 4 characters are left alone
    assertThat(redactor.redactText("no secrets here", args)).isEqualTo("no secrets here");
    assertThat(redactor.redactText("token=abc", "not json-able as an object"))
        .isEqualTo("token=[redacted]");
  }

  @Test
  void onlyChosenFieldsAreSelectedForEvents() {
    assertThat(redactor.selectFields(Map.of("city", "Lyon", "token", "t", "date", "2026-12-04"),
        List.of("city", "token", "missing")).toString()).isEqualTo("{\"city\":\"Lyon\",\"token\":\"[redacted]\"}");
  }
}
