package io.breakwater.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.breakwater.testing.Fuzz;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Key fingerprinting fed randomly generated hostile argument trees: deep nesting (past the depth limit), huge and tiny
 * numbers, NaN and infinities, negative zero, long strings, odd Unicode (lone surrogates, combining marks, byte-order
 * marks, controls), keys that look alike, cycles. Each tree gives a key or an {@link IdempotencyKeyException}, never
 * another exception nor a stack overflow; the same tree with its fields in another order, and built as a
 * {@code Map} or as a Jackson tree, gives the same key (or the same refusal). Sized by {@link Fuzz}.
 */
class KeyFingerprintFuzzTest {

  private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);
  private static final String[] KEYS = {"", "a", "A", "a.b", "id", "\u00e9", "e\u0301", "\uFEFFid", "\u0000",
      "\uD800", "\uDC00x", "😀", "k\u200Dk", "requestId", "1", "01", " a", "a "};

  @Test
  void hostileTreesGiveAKeyOrATypedErrorWhateverTheirFieldOrder() {
    long seed = Fuzz.seed(0xF1_9E2L);
    int cases = Fuzz.cases(1000);
    int keys = 0;
    int refused = 0;
    for (int c = 0; c < cases; c++) {
      String replay = Fuzz.replay(seed, c);
      SplittableRandom random = Fuzz.random(seed, c);
      Object spec = random.nextInt(10) == 0 ? deep(random, 150 + random.nextInt(300)) : tree(random, 0);
      Map<String, Object> args = Map.of("args", spec);
      long shuffle = random.nextLong();

      Outcome asMap = key(toMap(args, new Random(shuffle)), replay);
      Outcome reordered = key(toMap(args, new Random(~shuffle)), replay);
      Outcome asTree = key(toNode(args, new Random(shuffle ^ 0x5DEECE66DL)), replay);
      assertThat(reordered).as("%s: the same tree with its fields in another order", replay).isEqualTo(asMap);
      assertThat(asTree).as("%s: the same tree built as a Jackson tree", replay).isEqualTo(asMap);
      if (asMap.key != null) {
        keys++;
      } else {
        refused++;
      }
    }
    System.out.printf("KeyFingerprintFuzzTest: %d trees, %d keys, %d refused with IdempotencyKeyException; seed %d%n",
        cases, keys, refused, seed);
    assertThat(keys).as("most trees make keys").isGreaterThan(cases / 2);
    assertThat(refused).as("some trees are refused").isPositive();
  }

  @Test
  void cyclesAreRefusedWithATypedError() {
    long seed = Fuzz.seed(0xC1C1EL);
    int cases = Fuzz.cases(50);
    for (int c = 0; c < cases; c++) {
      String replay = Fuzz.replay(seed, c);
      SplittableRandom random = Fuzz.random(seed, c);
      Map<String, Object> root = new LinkedHashMap<>();
      Map<String, Object> at = root;
      for (int depth = random.nextInt(20); depth > 0; depth--) {
        Map<String, Object> child = new LinkedHashMap<>();
        at.put(KEYS[random.nextInt(KEYS.length)] + depth, child);
        at = child;
      }
      at.put("self", random.nextBoolean() ? root : List.of(at));
      assertThat(key(root, replay).key).as("%s: a cyclic tree makes no key", replay).isNull();
    }
  }

  /** A key, or null when refused with the typed error; any other throwable fails the test. */
  private record Outcome(String key) {}

  private static Outcome key(Object args, String replay) {
    try {
      IdempotencyKey key = IdempotencyKey.of("fuzz", args);
      assertThat(key.value()).as(replay).startsWith("default:fuzz:sha256:");
      return new Outcome(key.value());
    } catch (IdempotencyKeyException refused) {
      assertThat(refused.getMessage()).as(replay).isNotBlank();
      return new Outcome(null);
    } catch (Throwable unexpected) {
      fail(replay + ": " + unexpected + " is not an IdempotencyKeyException", unexpected);
      return null;
    }
  }

  // --- the generated trees: Map (object), List (array) or a leaf -------------------------------------------------

  private static Object tree(SplittableRandom random, int depth) {
    int pick = random.nextInt(depth > 6 ? 10 : 14);
    if (pick >= 10) {
      boolean object = pick % 2 == 0;
      int size = random.nextInt(6);
      if (object) {
        Map<String, Object> fields = new LinkedHashMap<>();
        for (int i = 0; i < size; i++) {
          fields.put(key(random), tree(random, depth + 1));
        }
        return fields;
      }
      List<Object> elements = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        elements.add(tree(random, depth + 1));
      }
      return elements;
    }
    return leaf(random);
  }

  private static Object deep(SplittableRandom random, int depth) {
    Object at = leaf(random);
    for (int i = 0; i < depth; i++) {
      at = random.nextBoolean() ? Map.of(key(random), at) : List.of(at);
    }
    return at;
  }

  private static String key(SplittableRandom random) {
    return random.nextInt(3) == 0 ? string(random) : KEYS[random.nextInt(KEYS.length)];
  }

  private static Object leaf(SplittableRandom random) {
    return switch (random.nextInt(16)) {
      case 0 -> Leaf.NULL;
      case 1 -> random.nextBoolean();
      case 2 -> random.nextInt();
      case 3 -> switch (random.nextInt(3)) {
        case 0 -> Long.MIN_VALUE;
        case 1 -> Long.MAX_VALUE;
        default -> random.nextLong();
      };
      case 4 -> new BigInteger(1 + random.nextInt(1200), new Random(random.nextLong()))
          .multiply(BigInteger.valueOf(random.nextBoolean() ? 1 : -1));
      case 5 -> new BigDecimal(BigInteger.valueOf(random.nextLong()), random.nextInt(2_000_001) - 1_000_000);
      case 6 -> {
        double[] odd = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0, 0.0, Double.MIN_VALUE,
            Double.MAX_VALUE, Double.MIN_NORMAL, 0.1, 1e308, 1e-308};
        yield odd[random.nextInt(odd.length)];
      }
      case 7 -> random.nextDouble() * Math.pow(10, random.nextInt(600) - 300);
      case 8 -> (float) random.nextDouble();
      case 9 -> "x".repeat(random.nextInt(random.nextInt(20) == 0 ? 200_000 : 100));
      default -> string(random);
    };
  }

  /** Odd Unicode: lone and paired surrogates, combining marks, controls, byte-order marks, RTL marks. */
  private static String string(SplittableRandom random) {
    StringBuilder s = new StringBuilder();
    int length = random.nextInt(12);
    for (int i = 0; i < length; i++) {
      switch (random.nextInt(16)) {
        case 0 -> s.append((char) (0xD800 + random.nextInt(0x800)));   // a lone surrogate, high or low
        case 1 -> s.appendCodePoint(0x10000 + random.nextInt(0x10FFFF - 0x10000));
        case 2 -> s.append((char) random.nextInt(0x20));
        case 3 -> s.append("\u0301\uFEFF\u200F\u2028".charAt(random.nextInt(4)));
        case 4 -> s.append("\"\\/".charAt(random.nextInt(3)));
        default -> s.append((char) (0x20 + random.nextInt(0x60)));
      }
    }
    return s.toString();
  }

  /** Stands for JSON null in the generated tree (Map.of refuses null values). */
  private enum Leaf { NULL }

  // --- the same tree as Java collections or as a Jackson tree, fields in a shuffled order ------------------------

  @SuppressWarnings("unchecked")
  private static Object toMap(Object spec, Random shuffle) {
    if (spec instanceof Map<?, ?> map) {
      List<Map.Entry<String, Object>> fields = new ArrayList<>(((Map<String, Object>) map).entrySet());
      Collections.shuffle(fields, shuffle);
      Map<String, Object> out = new LinkedHashMap<>();
      fields.forEach(f -> out.put(f.getKey(), toMap(f.getValue(), shuffle)));
      return out;
    }
    if (spec instanceof List<?> list) {
      List<Object> out = new ArrayList<>(list.size());
      list.forEach(e -> out.add(toMap(e, shuffle)));
      return out;
    }
    return spec == Leaf.NULL ? null : spec;
  }

  @SuppressWarnings("unchecked")
  private static JsonNode toNode(Object spec, Random shuffle) {
    if (spec instanceof Map<?, ?> map) {
      List<Map.Entry<String, Object>> fields = new ArrayList<>(((Map<String, Object>) map).entrySet());
      Collections.shuffle(fields, shuffle);
      ObjectNode out = NODES.objectNode();
      fields.forEach(f -> out.set(f.getKey(), toNode(f.getValue(), shuffle)));
      return out;
    }
    if (spec instanceof List<?> list) {
      ArrayNode out = NODES.arrayNode();
      list.forEach(e -> out.add(toNode(e, shuffle)));
      return out;
    }
    if (spec == Leaf.NULL) {
      return NODES.nullNode();
    }
    if (spec instanceof Boolean b) {
      return NODES.booleanNode(b);
    }
    if (spec instanceof Integer i) {
      return NODES.numberNode(i);
    }
    if (spec instanceof Long l) {
      return NODES.numberNode(l);
    }
    if (spec instanceof BigInteger b) {
      return NODES.numberNode(b);
    }
    if (spec instanceof BigDecimal d) {
      return NODES.numberNode(d);
    }
    if (spec instanceof Double d) {
      return NODES.numberNode(d);
    }
    if (spec instanceof Float f) {
      return NODES.numberNode(f);
    }
    return NODES.textNode((String) spec);
  }
}
