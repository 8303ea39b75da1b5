package io.breakwater.internal.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.breakwater.idempotency.IdempotencyKeyException;
import java.math.BigDecimal;
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

  /** A bean whose only property cannot be read. */
  public static final class Exploding {
    public String getValue() {
      throw new IllegalStateException("boom\nsecond line");
    }
  }
}
