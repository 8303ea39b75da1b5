package io.breakwater.internal.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
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
import java.util.stream.Collectors;

/**
 * Hides sensitive fields: in argument trees (events, fingerprints) and in free text (failure reasons, memory lines).
 * Field names match case-insensitively, ignoring {@code _} and {@code -}: {@code apiKey}, {@code api_key} and
 * {@code API-KEY} are one name. Immutable and thread-safe.
 */
public final class Redactor {

  /** Redacted whatever the configuration says. */
  public static final List<String> DEFAULT_FIELDS = List.of("password", "secret", "token", "apiKey", "api_key",
      "authorization", "cookie", "ssn", "cardNumber");

  public static final String MASK = "[redacted]";

  /** The shortest value of a sensitive field that {@link #redactText(String, Object)} masks where it is echoed. */
  public static final int MIN_ECHOED_SECRET = 4;

  private static final ObjectMapper MAPPER = JsonMapper.builder()
      .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
      .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
      .findAndAddModules()
      .build();

  private final Set<String> fields;
  private final Pattern inText;

  public Redactor(Collection<String> extraFields) {
    Set<String> all = new HashSet<>();
    DEFAULT_FIELDS.forEach(f -> all.add(normalise(f)));
    extraFields.forEach(f -> all.add(normalise(f)));
    this.fields = Set.copyOf(all);
    // name = value, name: value, "name":"value", with the name written in any of its spellings
    String names = all.stream().sorted().map(Redactor::looseName).collect(Collectors.joining("|"));
    this.inText = Pattern.compile("(?i)(\"?\\b(?:" + names + ")\\w*\"?\\s*[:=]\\s*)"
        + "(\"[^\"]*\"|(?:(?:bearer|basic|digest|token)\\s+)?[^\\s,;&}\\]]+)");
  }

  /** Whether a field of this name is redacted. */
  public boolean sensitive(String field) {
    return fields.contains(normalise(field));
  }

  /** {@code text} with the values of sensitive {@code name=value} and {@code "name":"value"} pairs masked. */
  public String redactText(String text) {
    if (text == null) {
      return "";
    }
    Matcher m = inText.matcher(text);
    return m.find() ? m.replaceAll(r -> Matcher.quoteReplacement(m.group(1) + MASK)) : text;
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
    return field.replace("_", "").replace("-", "").toLowerCase(Locale.ROOT);
  }

  /** A regex for a normalised name that also matches it with {@code _} or {@code -} between its letters. */
  private static String looseName(String normalised) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < normalised.length(); i++) {
      if (i > 0) {
        b.append("[_-]?");
      }
      b.append(Pattern.quote(String.valueOf(normalised.charAt(i))));
    }
    return b.toString();
  }
}
