package io.breakwater.internal.idempotency;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.StreamWriteConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.breakwater.idempotency.IdempotencyKeyException;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The canonical JSON form of key arguments, and its SHA-256. Written by hand from Jackson's tree, so that it depends
 * on no serializer setting or version: object keys sorted by UTF-16 code unit, no white space, numbers normalised
 * (integral values as integers, so {@code 1}, {@code 1.0} and {@code 1.00} are equal; trailing zeros dropped; a
 * value with more than 21 digits before or after the point that trailing zeros were stripped from, as
 * {@code <digits>e<exponent>}, so {@code 1e1000000} stays short), strings escaped as RFC 8785 does ({@code \"},
 * {@code \\}, {@code \b \t \n \f \r}, other control characters as a backslash-u escape with four lower-case hex
 * digits), UTF-8. Text must be valid Unicode: a lone UTF-16 surrogate has no UTF-8 form and is refused with an
 * {@link IdempotencyKeyException} (hashed as {@code ?}, it would make the same key as a question mark).
 */
public final class CanonicalJson {

  /** Deeper argument trees are refused rather than risking the stack. */
  public static final int MAX_DEPTH = 200;

  private static final int MAX_PLAIN_DIGITS = 21;

  /**
   * Jackson stops at this depth while serialising, so a cycle or a hostile structure ends in a typed error long
   * before the stack could overflow.
   */
  private static final ObjectMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
          .streamWriteConstraints(StreamWriteConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
          .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
          .build())
      .addModule(new JavaTimeModule())
      // Keep numbers exact through the round trip, and NaN a number, so that it is refused with a clear message.
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
      .disable(JsonWriteFeature.WRITE_NAN_AS_STRINGS)
      .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
      .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
      .build();

  private CanonicalJson() {}

  /** Rules applied while the canonical form is written. */
  public record Rules(Set<String> excluded, Map<String, Long> quantisedMillis, Set<String> unorderedArrays) {

    public static final Rules NONE = new Rules(Set.of(), Map.of(), Set.of());

    boolean excludes(String path, String name) {
      return excluded.contains(name) || excluded.contains(path);
    }

    @Nullable Long bucketFor(String path, String name) {
      Long byPath = quantisedMillis.get(path);
      return byPath != null ? byPath : quantisedMillis.get(name);
    }

    boolean unordered(String path, String name) {
      return unorderedArrays.contains(name) || unorderedArrays.contains(path);
    }
  }

  /** The canonical JSON of {@code value} under {@code rules}. */
  public static String write(@Nullable Object value, Rules rules) {
    String scalar = rules.quantisedMillis().isEmpty() ? scalar(value) : null;
    if (scalar != null) {
      return scalar;
    }
    JsonNode tree;
    try {
      tree = value instanceof JsonNode node ? node : MAPPER.readTree(MAPPER.writeValueAsBytes(value));
    } catch (StreamConstraintsException e) {
      throw tooDeep(e);
    } catch (IOException | IllegalArgumentException e) {
      if (e.getCause() instanceof StreamConstraintsException tooDeep) {
        throw tooDeep(tooDeep);
      }
      throw new IdempotencyKeyException("Key arguments cannot be turned into JSON: " + rootMessage(e)
          + ". Pass a Map, a record or a JSON-serialisable bean without cycles", e);
    }
    StringBuilder out = new StringBuilder(128);
    write(tree, "", "", rules, out, 0);
    return out.toString();
  }

  /**
   * The canonical form of a string, a whole number of at most 64 bits, a boolean or null, written without Jackson's
   * round trip (serialised and parsed again, as everything else is): the same text that round trip gives, at a
   * fraction of its cost; {@code null} for anything else. An explicit key's payload is often one of these.
   */
  private static @Nullable String scalar(@Nullable Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof String text) {
      StringBuilder out = new StringBuilder(text.length() + 2);
      string(text, out);
      return out.toString();
    }
    if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
      return Long.toString(((Number) value).longValue());
    }
    if (value instanceof Boolean bool) {
      return bool.toString();
    }
    return null;
  }

  private static IdempotencyKeyException tooDeep(@Nullable Throwable cause) {
    return new IdempotencyKeyException("Key arguments are nested deeper than " + MAX_DEPTH + " levels, or refer to "
        + "themselves in a cycle: key on the fields that identify the request, not on the whole structure", cause);
  }

  /**
   * One SHA-256 digest per thread that hashes keys, reused ({@code digest} resets it): looking one up for every key
   * was a tenth of a Redis hit's allocation.
   */
  private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("This JVM has no SHA-256", e);
    }
  });

  /** Lower-case hexadecimal SHA-256 of the UTF-8 bytes of {@code text}. */
  public static String sha256(String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    return HexFormat.of().formatHex(SHA_256.get().digest(bytes));
  }

  private static void write(JsonNode node, String path, String name, Rules rules, StringBuilder out, int depth) {
    if (depth > MAX_DEPTH) {
      throw tooDeep(null);
    }
    Long bucket = rules.bucketFor(path, name);
    if (bucket != null && !node.isContainerNode() && !node.isNull()) {
      out.append(quantise(node, bucket, path));
      return;
    }
    switch (node.getNodeType()) {
      case OBJECT -> {
        TreeMap<String, JsonNode> sorted = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> field = it.next();
          String childPath = path.isEmpty() ? field.getKey() : path + "." + field.getKey();
          if (!rules.excludes(childPath, field.getKey())) {
            sorted.put(field.getKey(), field.getValue());
          }
        }
        out.append('{');
        boolean first = true;
        for (Map.Entry<String, JsonNode> field : sorted.entrySet()) {
          if (!first) {
            out.append(',');
          }
          first = false;
          string(field.getKey(), out);
          out.append(':');
          String childPath = path.isEmpty() ? field.getKey() : path + "." + field.getKey();
          write(field.getValue(), childPath, field.getKey(), rules, out, depth + 1);
        }
        out.append('}');
      }
      case ARRAY -> {
        List<String> elements = new ArrayList<>(node.size());
        for (JsonNode element : node) {
          StringBuilder one = new StringBuilder();
          write(element, path, name, rules, one, depth + 1);
          elements.add(one.toString());
        }
        if (rules.unordered(path, name)) {
          elements.sort(null);
        }
        out.append('[').append(String.join(",", elements)).append(']');
      }
      case NUMBER -> out.append(number(node));
      case STRING -> string(node.textValue(), out);
      case BOOLEAN -> out.append(node.booleanValue());
      case NULL, MISSING -> out.append("null");
      case BINARY, POJO -> string(node.asText(), out);
    }
  }

  private static String number(JsonNode node) {
    if (node.isIntegralNumber()) {
      return normalise(new BigDecimal(node.bigIntegerValue()));
    }
    if (node.isDouble() || node.isFloat()) {
      double d = node.doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        throw new IdempotencyKeyException("Key arguments contain " + d
            + ", which has no JSON form: pass a finite number, or exclude the field");
      }
      return normalise(node.isFloat() ? new BigDecimal(Float.toString(node.floatValue())) : BigDecimal.valueOf(d));
    }
    return normalise(node.decimalValue());
  }

  /** Integral values as integers; otherwise trailing zeros dropped; extreme magnitudes as digits 'e' exponent. */
  static String normalise(BigDecimal value) {
    if (value.signum() == 0) {
      return "0";
    }
    BigDecimal stripped = value.stripTrailingZeros();
    int scale = stripped.scale();
    int integerDigits = stripped.precision() - scale;
    if (scale == 0 || (scale < 0 && integerDigits <= MAX_PLAIN_DIGITS)) {
      return stripped.toBigInteger().toString();
    }
    if (scale > 0 && scale <= MAX_PLAIN_DIGITS && integerDigits <= MAX_PLAIN_DIGITS) {
      return stripped.toPlainString();
    }
    BigInteger unscaled = stripped.unscaledValue();
    return unscaled + "e" + (-(long) scale);
  }

  private static String quantise(JsonNode node, long bucketMillis, String path) {
    long epochMillis;
    try {
      if (node.isNumber()) {
        if (!node.canConvertToLong()) {   // longValue() would wrap 2^64 + 5 to 5, the key of another time
          throw beyondRange(path);
        }
        epochMillis = node.longValue();
      } else if (node.isTextual()) {
        epochMillis = parseInstant(node.textValue(), path).toEpochMilli();
      } else {
        throw new IdempotencyKeyException("Time field '" + path + "' is " + node.getNodeType()
            + ": quantised fields must hold epoch milliseconds or an ISO-8601 instant");
      }
      return Long.toString(Math.multiplyExact(Math.floorDiv(epochMillis, bucketMillis), bucketMillis));
    } catch (ArithmeticException outOfRange) {   // an instant past a long of milliseconds, or its bucket's start
      throw beyondRange(path);
    }
  }

  /** A time field outside epoch milliseconds; neither the value nor its size is told: arguments may be secret. */
  private static IdempotencyKeyException beyondRange(String path) {
    return new IdempotencyKeyException("Time field '" + path + "' is beyond the range of epoch milliseconds "
        + "(292 million years either side of 1970): give epoch milliseconds or an ISO-8601 instant within it");
  }

  private static Instant parseInstant(String text, String path) {
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException notInstant) {
      try {
        return OffsetDateTime.parse(text).toInstant();
      } catch (DateTimeParseException e) {
        // neither the value nor the parser's message (which quotes it) goes into the error: arguments may be secret
        throw new IdempotencyKeyException("Time field '" + path + "' holds a string of " + text.length()
            + " characters that is not an ISO-8601 instant (e.g. 2026-11-30T10:15:30Z) nor epoch milliseconds");
      }
    }
  }

  private static void string(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\b' -> out.append("\\b");
        case '\t' -> out.append("\\t");
        case '\n' -> out.append("\\n");
        case '\f' -> out.append("\\f");
        case '\r' -> out.append("\\r");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else if (Character.isSurrogate(c) && !pairedSurrogate(s, i)) {
            throw new IdempotencyKeyException(String.format("Key arguments contain text with a lone UTF-16 "
                + "surrogate (\\u%04x), which has no UTF-8 form: it would make the same key as a '?' in its place. "
                + "Pass valid Unicode text, or exclude the field", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /** Whether the surrogate at {@code i} is half of a high-low pair (the low half is checked from the high one). */
  private static boolean pairedSurrogate(String s, int i) {
    char c = s.charAt(i);
    return Character.isHighSurrogate(c)
        ? i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))
        : i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage();
    return message == null ? root.getClass().getSimpleName() : message.lines().findFirst().orElse(message);
  }
}
