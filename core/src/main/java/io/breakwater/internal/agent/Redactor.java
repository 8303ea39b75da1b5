package io.breakwater.internal.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.breakwater.internal.idempotency.CanonicalJson;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hides sensitive fields: in argument trees (events, fingerprints) and in free text (failure reasons, memory lines).
 * A name is normalised (lower case, without {@code _}, {@code -} and {@code .}) and is sensitive when it
 * <em>contains</em> one of {@link #SENSITIVE_TERMS} ({@code access_token}, {@code client_secret}, {@code x-api-key},
 * {@code private_key}, {@code Set-Cookie} all do), equals {@code ssn}, or equals one of the extra fields given
 * ({@code redact(..)} of the tool's descriptor). In text, a sensitive name followed by {@code =} or {@code :} has
 * its value masked whatever precedes the name: a quoted value (double or single quotes) whole, escapes included, an
 * unquoted one up to the next separator, a cookie's up to the end of the line. Immutable and thread-safe.
 */
public final class Redactor {

  /** A normalised name containing one of these is sensitive, whatever the configuration says. */
  public static final List<String> SENSITIVE_TERMS = List.of("token", "secret", "password", "passwd", "passphrase",
      "apikey", "auth", "credential", "privatekey", "session", "cookie", "cardnumber");

  /** Normalised names that are sensitive only as a whole (as a part they would mask ordinary words). */
  public static final List<String> SENSITIVE_NAMES = List.of("ssn");

  public static final String MASK = "[redacted]";

  /** The shortest value of a sensitive field that {@link #redactText(String, Object)} masks where it is echoed. */
  public static final int MIN_ECHOED_SECRET = 4;

  /**
   * Reads a tool's arguments: Java time and {@code Optional} values, and nothing found on the class path. A
   * {@code findAndAddModules()} here scanned every jar for Jackson modules when the class was initialised, and with
   * jackson-module-kotlin on the class path (Spring AI, the OpenAI SDK) every argument was read through Kotlin
   * reflection, which loads its metadata from jar files at the first failure: on an event loop, a blocking read in a
   * static initialiser, whose error (under BlockHound) left Kotlin's classes unusable for the rest of the JVM.
   */
  private static final ObjectMapper MAPPER = JsonMapper.builder()
      .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
      .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
      .addModule(new JavaTimeModule())
      .addModule(new Jdk8Module())
      .build();

  /**
   * A name (optionally quoted) that does not continue a longer one, {@code =} or {@code :}, then the value: a double-
   * or single-quoted string with escapes (to the end of the text when unterminated), or an unquoted word, with an
   * authorisation scheme before it.
   */
  private static final Pattern NAME_VALUE = Pattern.compile("(?<![\\w.-])([\"']?)([A-Za-z][\\w.-]*)\\1(\\s*[:=]\\s*)"
      + "(\"(?:[^\"\\\\]|\\\\.)*+(?:\"|\\\\?$)|'(?:[^'\\\\]|\\\\.)*+(?:'|\\\\?$)"
      + "|(?i:(?:bearer|basic|digest|token)\\s+)?[^\\s,;&}\\]]+)");
  /** The rest of a cookie header's line, which holds several {@code name=value} pairs. */
  private static final Pattern REST_OF_LINE = Pattern.compile("[^\\r\\n]*");

  private final Set<String> fields;

  public Redactor(Collection<String> extraFields) {
    Set<String> all = new HashSet<>(SENSITIVE_NAMES);
    extraFields.forEach(f -> all.add(normalise(f)));
    this.fields = Set.copyOf(all);
  }

  /** The ids of the Jackson modules that read tool arguments (for tests). */
  static Set<Object> argumentModules() {
    return MAPPER.getRegisteredModuleIds();
  }

  /** Whether a field of this name is redacted. */
  public boolean sensitive(String field) {
    String name = normalise(field);
    if (fields.contains(name)) {
      return true;
    }
    for (String term : SENSITIVE_TERMS) {
      if (name.contains(term)) {
        return true;
      }
    }
    return false;
  }

  /** {@code text} with the values of sensitive {@code name=value}, {@code name: value} and JSON pairs masked. */
  public String redactText(String text) {
    if (text == null) {
      return "";
    }
    Matcher m = NAME_VALUE.matcher(text);
    StringBuilder out = null;
    int copied = 0;
    int from = 0;
    while (from < text.length() && m.find(from)) {
      if (!sensitive(m.group(2))) {
        from = m.end(3);
        continue;
      }
      if (out == null) {
        out = new StringBuilder(text.length());
      }
      int valueEnd = m.end(4);
      if (normalise(m.group(2)).contains("cookie") && !m.group(4).startsWith("\"")
          && !m.group(4).startsWith("'")) {
        Matcher line = REST_OF_LINE.matcher(text).region(m.start(4), text.length());
        valueEnd = line.lookingAt() ? line.end() : valueEnd;
      }
      out.append(text, copied, m.start(4)).append(MASK);
      copied = valueEnd;
      from = valueEnd;
    }
    return out == null ? text : out.append(text, copied, text.length()).toString();
  }

  /**
   * {@link #redactText(String)}, and also every value of a sensitive field of {@code args} that the text repeats
   * without its name (an error saying {@code "no account acct-77"}). Values shorter than
   * {@value #MIN_ECHOED_SECRET} characters are left alone: masking them would mask ordinary words and numbers.
   */
  public String redactText(String text, Object args) {
    String masked = redactText(text);
    if (masked.isEmpty()) {
      return masked;
    }
    List<String> secrets = new ArrayList<>();
    try {
      collectSensitiveValues(args instanceof JsonNode node ? node : MAPPER.valueToTree(args), false, secrets);
    } catch (RuntimeException notJson) {
      return masked;
    }
    secrets.sort(Comparator.comparingInt(String::length).reversed());   // a longer secret may contain a shorter one
    for (String secret : secrets) {
      masked = masked.replace(secret, MASK);
    }
    return masked;
  }

  /** The arguments as a JSON tree with sensitive fields masked, at any depth. */
  public JsonNode redactTree(Object args) {
    JsonNode tree = args instanceof JsonNode node ? node.deepCopy() : MAPPER.valueToTree(args);
    mask(tree);
    return tree;
  }

  /**
   * A short fingerprint of the arguments: the first 16 hex digits of the SHA-256 of their canonical JSON, computed
   * after masking, so that it cannot be used to guess a secret; {@code "unserialisable"} if they are not JSON.
   */
  public String fingerprint(Object args) {
    try {
      return CanonicalJson.sha256(CanonicalJson.write(redactTree(args), CanonicalJson.Rules.NONE)).substring(0, 16);
    } catch (RuntimeException notJson) {
      return "unserialisable";
    }
  }

  /** The named top-level fields of {@code args}, masked where sensitive; absent fields are left out. */
  public ObjectNode selectFields(Object args, Collection<String> names) {
    ObjectNode out = MAPPER.createObjectNode();
    if (names.isEmpty()) {
      return out;
    }
    JsonNode tree;
    try {
      tree = redactTree(args);
    } catch (RuntimeException notJson) {
      return out;
    }
    for (String name : names) {
      JsonNode value = tree.get(name);
      if (value != null) {
        out.set(name, value);
      }
    }
    return out;
  }

  private void collectSensitiveValues(JsonNode node, boolean underSensitive, List<String> out) {
    if (node == null) {
      return;
    }
    if (node.isValueNode()) {
      String value = node.asText();
      if (underSensitive && value.length() >= MIN_ECHOED_SECRET) {
        out.add(value);
      }
    } else if (node instanceof ObjectNode object) {
      for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> field = it.next();
        collectSensitiveValues(field.getValue(), underSensitive || sensitive(field.getKey()), out);
      }
    } else {
      node.forEach(child -> collectSensitiveValues(child, underSensitive, out));
    }
  }

  private void mask(JsonNode node) {
    if (node instanceof ObjectNode object) {
      for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> field = it.next();
        if (sensitive(field.getKey())) {
          field.setValue(TextNode.valueOf(MASK));
        } else {
          mask(field.getValue());
        }
      }
    } else if (node != null && node.isArray()) {
      node.forEach(this::mask);
    }
  }

  private static String normalise(String field) {
    StringBuilder b = new StringBuilder(field.length());
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      if (c != '_' && c != '-' && c != '.') {
        b.append(c);
      }
    }
    return b.toString().toLowerCase(Locale.ROOT);
  }
}
