package io.breakwater.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.internal.agent.Redactor;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
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

  @Test
  void credentialsOfWellKnownShapesAreMaskedInFreeTextWithoutAName() {
    String text = "key sk-abcdef0123456789ABCDEF rejected; sk-ant-api03-Zx9_yW8-vU7t; sk_live_51HxQz8aBcD; "
        + "AKIAIOSFODNN7EXAMPLE in us-east-1; AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv; "
        + "ghp_0123456789abcdefghijABCDEFGHIJ; xoxb-1234567890-abcdef; "
        + "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl; Bearer 0a1b2c3d4e5f6a7b8c9d sent";
    assertThat(redactor.redactText(text)).isEqualTo("key [redacted] rejected; [redacted]; [redacted]; "
        + "[redacted] in us-east-1; [redacted]; [redacted]; [redacted]; jwt [redacted]; Bearer [redacted] sent");
    // ordinary words that share a prefix are left alone
    assertThat(redactor.redactText("risk-assessment of sk-learn, the bearer of news, eyJ, AKIA?"))
        .isEqualTo("risk-assessment of sk-learn, the bearer of news, eyJ, AKIA?");
  }

  /**
   * Each input is a MiB built to make a backtracking pattern re-read the text from every position: chains of names
   * ({@code a=a=a=}, which took 44 s at 128 KiB), unterminated and nested quotes, escapes, runs of key characters and
   * of prefixes of credential shapes.
   */
  @Test
  void maskingIsLinearOnAdversarialInputsOfOneMebibyte() {
    int mib = 1 << 20;
    Map<String, String> inputs = new LinkedHashMap<>();
    inputs.put("a=a=a=", repeat("a=", mib));
    inputs.put("token=token=", repeat("token=", mib));
    inputs.put("a:'a:'a:'", repeat("a:'", mib));
    inputs.put("\"a\":\"a\":", repeat("\"a\":", mib));
    inputs.put("\"a\"=\"a\"=", repeat("\"a\"=", mib));
    inputs.put("token=\" then escapes", "token=\"" + repeat("\\\"", mib));
    inputs.put("quotes", repeat("\"", mib));
    inputs.put("key characters", repeat("a", mib));
    inputs.put("a name then spaces", "a" + repeat(" ", mib));
    inputs.put("a.b.c.", repeat("a.", mib));
    inputs.put("cookie=a;", "cookie=" + repeat("a;", mib));
    inputs.put("sk-sk-", repeat("sk-", mib));
    inputs.put("sk-a sk-a", repeat("sk-a ", mib));
    inputs.put("AKIA", repeat("AKIA", mib));
    inputs.put("eyJ.", repeat("eyJaaaaaaaa.", mib));
    inputs.put("eyJ.eyJ.", "eyJaaaaaaaa." + repeat("eyJaaaa", mib));
    inputs.put("Bearer Bearer", repeat("Bearer ", mib));
    inputs.put("Bearer then spaces", "Bearer" + repeat(" ", mib));
    inputs.put("token token", repeat("token ", mib));
    inputs.put("auth=auth=", repeat("auth=", mib));
    Duration budget = Duration.ofMillis(100);
    // many short calls first, so that the JIT is asked to compile the scanners before they are timed
    String sample = String.join("", inputs.values().stream().map(t -> t.substring(0, 64)).toList());
    for (int i = 0; i < 5_000; i++) {
      redactor.redactText(sample);
    }
    // each run is timed in the CPU time of this thread, not wall time: on a machine shared with other builds a linear
    // scan waits for a core, which is no sign of a slow scan, and used to keep the runs going for a minute. Each input
    // is run until one run is under budget, within 30 s for all, as the JIT compiles the scanners only after a few
    // runs with the coverage agent; a quadratic scan never gets there (a=a=a= of 64 KiB took 12 s before)
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    LongSupplier cpu = threads.isCurrentThreadCpuTimeSupported() ? threads::getCurrentThreadCpuTime : System::nanoTime;
    long window = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    inputs.forEach((name, text) -> {
      long best = Long.MAX_VALUE;
      do {
        long start = cpu.getAsLong();
        redactor.redactText(text);
        best = Math.min(best, cpu.getAsLong() - start);
      } while (best >= budget.toNanos() && System.nanoTime() - window < 0);
      assertThat(Duration.ofNanos(best)).as(name).isLessThan(budget);
    });
  }

  private static String repeat(String unit, int length) {
    return unit.repeat(length / unit.length()).substring(0, length / unit.length() * unit.length());
  }
}
