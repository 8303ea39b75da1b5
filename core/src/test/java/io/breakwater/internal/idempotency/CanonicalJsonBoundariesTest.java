package io.breakwater.internal.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.breakwater.idempotency.IdempotencyKeyException;
import java.math.BigDecimal;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The edges of {@link CanonicalJson} that the mutation run (docs/reliability.md, "Mutation testing") found untested:
 * numbers exactly at the 21 digits written in plain notation, a tree handed over as a {@code JsonNode} (which no
 * parser limited in depth), and the message of arguments that cannot be turned into JSON.
 */
class CanonicalJsonBoundariesTest {

  @Test
  void twentyOneIntegerDigitsAreWrittenPlainAndTwentyTwoWithAnExponent() {
    assertThat(CanonicalJson.normalise(new BigDecimal("1E+20"))).isEqualTo("100000000000000000000");
    assertThat(CanonicalJson.normalise(new BigDecimal("1E+21"))).isEqualTo("1e21");
  }

  @Test
  void twentyOneFractionDigitsAreWrittenPlainAndTwentyTwoWithAnExponent() {
    assertThat(CanonicalJson.normalise(new BigDecimal("1E-21"))).isEqualTo("0.000000000000000000001");
    assertThat(CanonicalJson.normalise(new BigDecimal("1E-22"))).isEqualTo("1e-22");
  }

  @Test
  void aFractionWithTwentyOneIntegerDigitsIsWrittenPlain() {
    assertThat(CanonicalJson.normalise(new BigDecimal("123456789012345678901.5")))
        .isEqualTo("123456789012345678901.5");
  }

  @Test
  void aTreeGivenAsAJsonNodeIsLimitedInDepthToo() {
    ArrayNode root = JsonNodeFactory.instance.arrayNode();
    ArrayNode current = root;
    for (int i = 0; i < CanonicalJson.MAX_DEPTH + 10; i++) {
      current = current.addArray();
    }
    assertThatExceptionOfType(IdempotencyKeyException.class)
        .isThrownBy(() -> CanonicalJson.write(root, CanonicalJson.Rules.NONE))
        .withMessageContaining("nested deeper than " + CanonicalJson.MAX_DEPTH);
  }

  @Test
  void argumentsThatCannotBeJsonNameTheFirstLineOfTheRootCause() {
    assertThatExceptionOfType(IdempotencyKeyException.class)
        .isThrownBy(() -> CanonicalJson.write(new Exploding(), CanonicalJson.Rules.NONE))
        .withMessageContaining("cannot be turned into JSON: boom.")
        .withMessageNotContaining("second line");
  }

  @Test
  void aTreeExactlyAtTheDepthLimitIsWrittenAndOneLevelMoreIsRefused() {
    assertThat(CanonicalJson.write(nestedArrays(CanonicalJson.MAX_DEPTH), CanonicalJson.Rules.NONE))
        .isEqualTo("[".repeat(CanonicalJson.MAX_DEPTH + 1) + "]".repeat(CanonicalJson.MAX_DEPTH + 1));
    assertThatExceptionOfType(IdempotencyKeyException.class)
        .isThrownBy(() -> CanonicalJson.write(nestedArrays(CanonicalJson.MAX_DEPTH + 1), CanonicalJson.Rules.NONE));
  }

  @Test
  void nestedObjectsCountTowardsTheDepthLimitLikeArrays() {
    assertThat(CanonicalJson.write(nestedObjects(CanonicalJson.MAX_DEPTH), CanonicalJson.Rules.NONE))
        .isEqualTo("{\"a\":".repeat(CanonicalJson.MAX_DEPTH) + "{}" + "}".repeat(CanonicalJson.MAX_DEPTH));
    assertThatExceptionOfType(IdempotencyKeyException.class)
        .isThrownBy(() -> CanonicalJson.write(nestedObjects(CanonicalJson.MAX_DEPTH + 1), CanonicalJson.Rules.NONE))
        .withMessageContaining("nested deeper than " + CanonicalJson.MAX_DEPTH);
  }

  /** {@code levels} arrays inside the root one: the innermost is at depth {@code levels}. */
  private static ArrayNode nestedArrays(int levels) {
    ArrayNode root = JsonNodeFactory.instance.arrayNode();
    ArrayNode current = root;
    for (int i = 0; i < levels; i++) {
      current = current.addArray();
    }
    return root;
  }

  /** {@code levels} objects inside the root one, each the value of "a": the innermost is at depth {@code levels}. */
  private static ObjectNode nestedObjects(int levels) {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    ObjectNode current = root;
    for (int i = 0; i < levels; i++) {
      current = current.putObject("a");
    }
    return root;
  }

  @Test
  void aQuantisingRuleByPathAppliesWhereTheFieldsNameHasNone() {
    CanonicalJson.Rules byPath = new CanonicalJson.Rules(Set.of(), Map.of("flight.at", 1000L), Set.of());
    assertThat(CanonicalJson.write(Map.of("flight", Map.of("at", 1234L), "at", 1234L), byPath))
        .isEqualTo("{\"at\":1234,\"flight\":{\"at\":1000}}");
  }

  @Test
  void binaryInATreeIsWrittenAsItsBase64Text() {
    assertThat(CanonicalJson.write(JsonNodeFactory.instance.binaryNode(new byte[] {1, 2, 3}),
        CanonicalJson.Rules.NONE)).isEqualTo("\"AQID\"");
  }

  @Test
  void theMessageNamesTheDeepestCauseNotTheExceptionThatWrapsIt() {
    assertThatExceptionOfType(IdempotencyKeyException.class)
        .isThrownBy(() -> CanonicalJson.write(new ExplodingWithCause(), CanonicalJson.Rules.NONE))
        .withMessageContaining("cannot be turned into JSON: the root.")
        .withMessageNotContaining("wrapper");
  }

  /** A bean whose property fails with a wrapped cause. */
  public static final class ExplodingWithCause {
    public String getValue() {
      throw new IllegalStateException("wrapper", new IllegalArgumentException("the root"));
    }
  }

  /** A bean whose only property cannot be read. */
  public static final class Exploding {
    public String getValue() {
      throw new IllegalStateException("boom\nsecond line");
    }
  }
}
