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

  private static final byte LETTER = 1;
  private static final byte NAME_CHAR = 2;
  private static final byte SPACE = 4;
  /** The classes of the ASCII characters: a letter, a character of a name ({@code [\\w.-]}), white space. */
  private static final byte[] CHARS = new byte[128];

  static {
    for (char c = 0; c < 128; c++) {
      boolean letter = c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z';
      boolean name = letter || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-';
      boolean space = c == ' ' || c == '\t' || c == '\n' || c == '\u000b' || c == '\f' || c == '\r';
      CHARS[c] = (byte) ((letter ? LETTER : 0) | (name ? NAME_CHAR : 0) | (space ? SPACE : 0));
    }
  }

  /** The authorisation schemes that may precede an unquoted value, which is then masked with them. */
  private static final List<String> SCHEMES = List.of("bearer", "basic", "digest", "token");

  private final Set<String> fields;
  /** The length of the shortest sensitive name or term: a shorter name is never sensitive. */
  private final int shortestSensitive;

  public Redactor(Collection<String> extraFields) {
    Set<String> all = new HashSet<>(SENSITIVE_NAMES);
    extraFields.forEach(f -> all.add(normalise(f)));
    this.fields = Set.copyOf(all);
    int shortest = Integer.MAX_VALUE;
    for (String name : all) {
      shortest = Math.min(shortest, name.length());
    }
    for (String term : SENSITIVE_TERMS) {
      shortest = Math.min(shortest, term.length());
    }
    this.shortestSensitive = shortest;
  }

  /** The ids of the Jackson modules that read tool arguments (for tests). */
  static Set<Object> argumentModules() {
    return MAPPER.getRegisteredModuleIds();
  }

  /** Whether a field of this name is redacted. */
  public boolean sensitive(String field) {
    if (field.length() < shortestSensitive) {
      return false;   // normalising only shortens a name
    }
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

  /**
   * {@code text} with the values of sensitive {@code name=value}, {@code name: value} and JSON pairs masked, and every
   * credential of a well-known shape ({@link CredentialShapes}). Linear in the length of the text whatever it holds.
   */
  public String redactText(String text) {
    if (text == null) {
      return "";
    }
    return CredentialShapes.mask(maskNamedValues(text), MASK);
  }

  /**
   * Masks the value after each sensitive name. A name (optionally quoted) starts with a letter, does not continue a
   * longer one ({@code [\\w.-]}), and is followed by {@code =} or {@code :}; the value is read only after the name
   * proved sensitive. Written by hand, each character read a bounded number of times: the regular expression it
   * replaces matched a value after every name, sensitive or not, so {@code a=a=a=...} read the rest of the text from
   * each {@code =} (128 KiB took 44 s).
   */
  private String maskNamedValues(String text) {
    StringBuilder out = null;
    int copied = 0;
    int n = text.length();
    for (int i = 0; i < n; ) {
      // one table look-up a character, no call: the loop stays small enough to be compiled whatever instruments it
      char c = text.charAt(i);
      if (c >= 128 || (CHARS[c] & LETTER) == 0 || i > 0 && isNameChar(text.charAt(i - 1))) {
        i++;
        continue;
      }
      int nameEnd = i + 1;
      while (nameEnd < n && isNameChar(text.charAt(nameEnd))) {
        nameEnd++;
      }
      int j = nameEnd;
      if (i > 0 && isQuote(text.charAt(i - 1)) && (i < 2 || !isNameChar(text.charAt(i - 2))) && j < n
          && text.charAt(j) == text.charAt(i - 1)) {
        j++;   // "name": the quotes around a name must match
      }
      j = skipSpace(text, j);
      if (j >= n || text.charAt(j) != '=' && text.charAt(j) != ':') {
        i = nameEnd;
        continue;
      }
      int nameStart = i;
      int valueStart = skipSpace(text, j + 1);
      i = valueStart;
      if (nameEnd - nameStart < shortestSensitive || !sensitive(text.substring(nameStart, nameEnd))) {
        continue;
      }
      int valueEnd = valueEnd(text, valueStart, normalise(text.substring(nameStart, nameEnd)).contains("cookie"));
      if (valueEnd == valueStart) {
        continue;
      }
      if (out == null) {
        out = new StringBuilder(n);
      }
      out.append(text, copied, valueStart).append(MASK);
      copied = valueEnd;
      i = valueEnd;
    }
    return out == null ? text : out.append(text, copied, n).toString();
  }

  /**
   * Where the value starting at {@code start} ends: a double- or single-quoted string with escapes (to the end of the
   * text when unterminated), else an unquoted word with an authorisation scheme before it, or for a cookie the rest
   * of the line; {@code start} when there is no value.
   */
  private static int valueEnd(String text, int start, boolean cookie) {
    int n = text.length();
    if (start >= n) {
      return start;
    }
    char quote = text.charAt(start);
    if (quote == '"' || quote == '\'') {
      for (int i = start + 1; i < n; i++) {
        char c = text.charAt(i);
        if (c == '\\') {
          i++;
        } else if (c == quote) {
          return i + 1;
        }
      }
      return n;
    }
    int wordStart = start;
    for (String scheme : SCHEMES) {
      int after = start + scheme.length();
      if (after < n && text.regionMatches(true, start, scheme, 0, scheme.length())
          && isSpace(text.charAt(after))) {
        int word = after;
        while (word < n && isSpace(text.charAt(word))) {
          word++;
        }
        if (wordEnd(text, word) > word) {
          wordStart = word;
        }
        break;
      }
    }
    int end = wordEnd(text, wordStart);
    if (end == wordStart) {
      return start;
    }
    if (cookie) {
      while (end < n && text.charAt(end) != '\r' && text.charAt(end) != '\n') {
        end++;
      }
    }
    return end;
  }

  /** The first character at or after {@code i} that is not white space ({@code \\s}). */
  private static int skipSpace(String text, int i) {
    while (i < text.length() && isSpace(text.charAt(i))) {
      i++;
    }
    return i;
  }

  private static boolean isSpace(char c) {
    return c < 128 && (CHARS[c] & SPACE) != 0;
  }

  /** {@code [\\w.-]}: a character that continues a name. */
  private static boolean isNameChar(char c) {
    return c < 128 && (CHARS[c] & NAME_CHAR) != 0;
  }

  private static boolean isQuote(char c) {
    return c == '"' || c == '\'';
  }

  /** The end of the unquoted word at {@code i}: up to white space or one of {@code , ; & } ]}. */
  private static int wordEnd(String text, int i) {
    int n = text.length();
    while (i < n) {
      char c = text.charAt(i);
      if (isSpace(c) || c == ',' || c == ';' || c == '&' || c == '}' || c == ']') {
        break;
      }
      i++;
    }
    return i;
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
    for (String secret : sensitiveValues(args)) {
      masked = masked.replace(secret, MASK);
    }
    return masked;
  }

  /**
   * The values of the sensitive fields of {@code args} (at any depth) of at least {@value #MIN_ECHOED_SECRET}
   * characters, longest first (a longer secret may contain a shorter one); none when {@code args} is not JSON.
   */
  public List<String> sensitiveValues(Object args) {
    List<String> secrets = new ArrayList<>();
    try {
      collectSensitiveValues(args instanceof JsonNode node ? node : MAPPER.valueToTree(args), false, secrets);
    } catch (RuntimeException notJson) {
      return List.of();
    }
    secrets.sort(Comparator.comparingInt(String::length).reversed());
    return secrets;
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
