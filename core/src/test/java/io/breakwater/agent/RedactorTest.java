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
