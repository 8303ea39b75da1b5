package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import io.breakwater.internal.agent.Redactor;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

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

  /**
   * {@code text} with the secrets masked; {@code request} is the request's JSON, or {@code null}. Only the first
   * {@value #MAX_MASKED_CHARS} characters are kept (then {@code …}), cut before masking so that an event of a MiB costs
   * no more than its excerpt; a cut that would keep the start of a secret drops that start too.
   */
  String mask(String text, @Nullable JsonNode request) {
    List<String> all = secrets;
    if (request != null) {
      List<String> fields = redactor.sensitiveValues(request);
      if (!fields.isEmpty()) {
        all = new ArrayList<>(secrets);
        all.addAll(fields);
        all.sort(Comparator.comparingInt(String::length).reversed());
      }
    }
    String masked = cut(text, all);
    for (String secret : all) {
      masked = masked.replace(secret, Redactor.MASK);
    }
    return redactor.redactText(masked);
  }

  /** The most characters of a server's text that are masked and kept: the rest never reaches a message. */
  static final int MAX_MASKED_CHARS = 4 * 1024;

  private static String cut(String text, List<String> secrets) {
    if (text.length() <= MAX_MASKED_CHARS) {
      return text;
    }
    int end = MAX_MASKED_CHARS;
    if (Character.isHighSurrogate(text.charAt(end - 1))) {
      end--;
    }
    for (boolean shortened = true; shortened && end > 0; ) {
      shortened = false;
      for (String secret : secrets) {
        int partial = partialAtEnd(text, end, secret);
        if (partial > 0) {
          end -= partial;
          shortened = true;
        }
      }
    }
    return text.substring(0, end) + '…';
  }

  /** How many characters before {@code end} are the start of {@code secret} that the cut at {@code end} splits. */
  private static int partialAtEnd(String text, int end, String secret) {
    for (int k = Math.min(secret.length() - 1, end); k > 0; k--) {
      if (text.regionMatches(end - k, secret, 0, k) && text.regionMatches(end, secret, k, secret.length() - k)) {
        return k;
      }
    }
    return 0;
  }
}
