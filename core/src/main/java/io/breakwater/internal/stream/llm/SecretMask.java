package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import io.breakwater.internal.agent.Redactor;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Masks what a server may echo back of the client's own secrets before its text goes into an exception: the values
 * of credential headers ({@code Authorization}, {@code x-api-key}, ...; a bearer token also without its scheme),
 * {@code name=value} pairs of sensitive names, and values of sensitive fields of the request. Made when a client is
 * built (which also initialises the {@link Redactor}, whose class loads Jackson modules: never on an event loop).
 */
final class SecretMask {

  /** Parts of header names that mark credentials. */
  private static final List<String> CREDENTIAL_NAMES = List.of("auth", "key", "token", "secret", "cookie", "password",
      "credential", "session");

  private final Redactor redactor = new Redactor(List.of());
  private final List<String> secrets;

  SecretMask(Map<String, String> headers) {
    List<String> values = new ArrayList<>();
    headers.forEach((name, value) -> {
      String n = name.toLowerCase(Locale.ROOT);
      if (CREDENTIAL_NAMES.stream().anyMatch(n::contains)) {
        add(values, value);
        int space = value.indexOf(' ');
        if (space > 0) {
          add(values, value.substring(space + 1));   // "Bearer sk-..." echoed as "sk-..."
        }
      }
    });
    values.sort(Comparator.comparingInt(String::length).reversed());
    this.secrets = List.copyOf(values);
  }

  private static void add(List<String> values, String value) {
    String v = value.trim();
    if (v.length() >= Redactor.MIN_ECHOED_SECRET) {
      values.add(v);
    }
  }

  /** {@code text} with the secrets masked; {@code request} is the request's JSON, or {@code null}. */
  String mask(String text, JsonNode request) {
    String masked = request == null ? redactor.redactText(text) : redactor.redactText(text, request);
    for (String secret : secrets) {
      masked = masked.replace(secret, Redactor.MASK);
    }
    return masked;
  }
}
