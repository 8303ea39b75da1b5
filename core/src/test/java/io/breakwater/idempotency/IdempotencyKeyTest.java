package io.breakwater.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class IdempotencyKeyTest {

  record Item(String sku, int qty) {}

  record Cancel(double amount, List<Item> items, String reason) {}

  /**
   * Golden vectors: the expected hashes were computed outside Java (Python's hashlib over the canonical JSON written
   * out by hand), so they pin the canonical form itself, not just this implementation's output. A change to any of
   * them breaks every stored key: never update them, add new ones.
   */
  @Test
  void goldenFingerprintsAreStable() {
    Map<String, Object> flights = new LinkedHashMap<>();
    flights.put("to", "JFK");
    flights.put("passengers", 2);
    flights.put("from", "LHR");
    assertThat(IdempotencyKey.of("flights.search", flights).value())
        .isEqualTo("default:flights.search:sha256:a690e9f0a6e4afc893ee3e634c9e89b194d1acab109260989a6e8fa7ee5bb763");

    assertThat(IdempotencyKey.of("orders.cancel", new Cancel(12.50, List.of(new Item("A-1", 1)), "late"))
        .fingerprint())
        .isEqualTo("e81ce426d554cb60a5b1d625aa0fc36597b6bef3b9cfe418e8cdbdf52e1c348c");

    assertThat(IdempotencyKey.of("unicode", Map.of("city", "Zürich", "emoji", "🚀", "quote", "say \"hi\"\n"))
        .fingerprint())
        .isEqualTo("f97da81b5fc9ba936ad9ed424718ae3472f3630941e1f61f4b4ffc510cc8d5de");

    assertThat(IdempotencyKey.of("numbers", Map.of(
            "big", new BigInteger("12345678901234567890123"),
            "int", 1.0,
            "neg", new BigDecimal("-0.250"),
            "small", 1e-30,
            "zero", -0.0))
        .fingerprint())
        .isEqualTo("c632c0d991563c87ac3f1f29bdee962aa456a447631ddd3ad2a3d59e375cfbdf");
  }

  /**
   * A payload that is one string, whole number, boolean or null is written without Jackson's round trip: its key is
   * the one the round trip gave (the tree of the same value, which goes the long way), and the golden hashes (Python's
   * hashlib over the canonical text) pin the form itself.
   */
  @Test
  void scalarPayloadsMakeTheKeysTheJsonRoundTripMakes() throws Exception {
    ObjectMapper json = new ObjectMapper();
    List<Object> scalars = new ArrayList<>(List.of("ord-1 \"q\"\n\u0001", "", "Zürich 🚀 \u2028", 0, -1, 42,
        Integer.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE, (short) -7, (byte) 127, true, false));
    scalars.add(null);
    for (Object scalar : scalars) {
      assertThat(IdempotencyKey.builder("orders.cancel").clientKey("ord-1").args(scalar).build().fingerprint())
          .as("the fingerprint of %s", scalar)
          .isEqualTo(IdempotencyKey.builder("orders.cancel").clientKey("ord-1")
              .args(json.readTree(json.writeValueAsBytes(scalar))).build().fingerprint());
    }
    assertThat(IdempotencyKey.explicit("t", "k", 42).fingerprint())
        .isEqualTo("73475cb40a568e8da8a045ced110137e159f890ac4da883b6b17dc651b3a8049");
    assertThat(IdempotencyKey.explicit("t", "k", Long.MIN_VALUE).fingerprint())
        .isEqualTo("85386477f3af47e4a0b308ee3b3a688df16e8b2228105dd7d4dcd42a9807cb78");
    assertThat(IdempotencyKey.explicit("t", "k", "ord-1 \"q\"\n\u0001").fingerprint())
        .isEqualTo("5a8d52fb545948a4fb37d47ccbd62728f1c41ec422fc13508943be7aa06f7e5c");
    assertThat(IdempotencyKey.explicit("t", "k", true).fingerprint())
        .isEqualTo("b5bea41b6c623f7c09f1bf24dcae58ebab3c0cdd90ad966bc43a45b44867e12b");
    assertThat(IdempotencyKey.of("t", null).fingerprint())
        .isEqualTo("74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b");
    assertThatThrownBy(() -> IdempotencyKey.explicit("t", "k", "lone \ud800"))
        .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("lone UTF-16 surrogate");
  }

  @Test
  void keyOrderIsIrrelevant() {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("from", "LHR");
    a.put("to", "JFK");
    Map<String, Object> b = new LinkedHashMap<>();
    b.put("to", "JFK");
    b.put("from", "LHR");

    assertThat(IdempotencyKey.of("flights.search", a)).isEqualTo(IdempotencyKey.of("flights.search", b));
  }

  @Test
  void numbersAreNormalised() {
    assertThat(IdempotencyKey.of("t", Map.of("n", 1)).value())
        .isEqualTo(IdempotencyKey.of("t", Map.of("n", 1.0)).value())
        .isEqualTo(IdempotencyKey.of("t", Map.of("n", new BigDecimal("1.00"))).value())
        .isEqualTo(IdempotencyKey.of("t", Map.of("n", 1L)).value());
    assertThat(IdempotencyKey.of("t", Map.of("n", 1)).value())
        .isNotEqualTo(IdempotencyKey.of("t", Map.of("n", "1")).value());
  }

  @Test
  void transientFieldsAreIgnoredAtAnyDepthOrByPath() {
    IdempotencyKey first = IdempotencyKey.builder("orders.cancel")
        .args(Map.of("orderId", "o-1", "requestId", "r-1", "meta", Map.of("traceId", "t-1", "requestId", "r-9")))
        .excluding("requestId", "meta.traceId")
        .build();
    IdempotencyKey retry = IdempotencyKey.builder("orders.cancel")
        .args(Map.of("orderId", "o-1", "requestId", "r-2", "meta", Map.of("traceId", "t-2", "requestId", "r-7")))
        .excluding("requestId", "meta.traceId")
        .build();
    IdempotencyKey otherOrder = IdempotencyKey.builder("orders.cancel")
        .args(Map.of("orderId", "o-2", "requestId", "r-1", "meta", Map.of("traceId", "t-1")))
        .excluding("requestId", "meta.traceId")
        .build();

    assertThat(retry).isEqualTo(first);
    assertThat(otherOrder).isNotEqualTo(first);
  }

  @Test
  void namespacesSeparateTenants() {
    IdempotencyKey acme = IdempotencyKey.builder("refund").namespace("acme").args(Map.of("order", 1)).build();
    IdempotencyKey globex = IdempotencyKey.builder("refund").namespace("globex").args(Map.of("order", 1)).build();

    assertThat(acme.value()).startsWith("acme:refund:sha256:");
    assertThat(globex.value()).startsWith("globex:refund:sha256:");
    assertThat(acme.fingerprint()).isEqualTo(globex.fingerprint());
    assertThat(acme).isNotEqualTo(globex);
  }

  @Test
  void unorderedArraysAreOptInPerField() {
    Map<String, Object> ab = Map.of("tags", List.of("a", "b"), "route", List.of("LHR", "JFK"));
    Map<String, Object> ba = Map.of("tags", List.of("b", "a"), "route", List.of("LHR", "JFK"));
    Map<String, Object> reversedRoute = Map.of("tags", List.of("a", "b"), "route", List.of("JFK", "LHR"));

    assertThat(IdempotencyKey.of("t", ab)).as("order matters by default").isNotEqualTo(IdempotencyKey.of("t", ba));
    IdempotencyKey.Builder tagsUnordered = IdempotencyKey.builder("t").unorderedArrays("tags");
    assertThat(tagsUnordered.args(ab).build()).isEqualTo(IdempotencyKey.builder("t").unorderedArrays("tags")
        .args(ba).build());
    assertThat(IdempotencyKey.builder("t").unorderedArrays("tags").args(reversedRoute).build())
        .isNotEqualTo(IdempotencyKey.builder("t").unorderedArrays("tags").args(ab).build());
  }

  @Test
  void timeFieldsAreQuantisedIntoBuckets() {
    IdempotencyKey at1003 = IdempotencyKey.builder("book").quantise("clientTime", Duration.ofMinutes(5))
        .args(Map.of("room", 7, "clientTime", "2026-11-30T10:03:12Z")).build();
    IdempotencyKey at1004 = IdempotencyKey.builder("book").quantise("clientTime", Duration.ofMinutes(5))
        .args(Map.of("room", 7, "clientTime", Instant.parse("2026-11-30T10:04:59.999Z"))).build();
    IdempotencyKey at1005 = IdempotencyKey.builder("book").quantise("clientTime", Duration.ofMinutes(5))
        .args(Map.of("room", 7, "clientTime", Instant.parse("2026-11-30T10:05:00Z").toEpochMilli())).build();

    assertThat(at1004).isEqualTo(at1003);
    assertThat(at1005).isNotEqualTo(at1003);
  }

  @Test
  void aQuantisationBucketOfForeverPutsEveryTimeInOneBucket() {
    Duration forever = Duration.ofSeconds(Long.MAX_VALUE);
    IdempotencyKey monday = IdempotencyKey.builder("book").quantise("clientTime", forever)
        .args(Map.of("room", 7, "clientTime", "2026-11-30T10:03:12Z")).build();
    IdempotencyKey decadeLater = IdempotencyKey.builder("book").quantise("clientTime", forever)
        .args(Map.of("room", 7, "clientTime", "2036-11-30T10:03:12Z")).build();

    assertThat(decadeLater).isEqualTo(monday);
  }

  @Test
  void aTimeFieldBeyondALongOfMillisecondsGetsATypedErrorNotACollisionOrAnArithmeticException() throws Exception {
    ObjectMapper json = new ObjectMapper();
    // 2^64 + 5: Jackson's longValue() wraps it to 5, which would share its key with the time 5
    for (String hostile : new String[] {"{\"when\": 18446744073709551621}", "{\"when\": -9223372036854775808}",
        "{\"when\": \"+1000000000-01-01T00:00:00Z\"}", "{\"when\": 1e300}"}) {
      assertThatThrownBy(() -> IdempotencyKey.builder("book").quantise("when", Duration.ofMinutes(1))
          .args(json.readTree(hostile)).build())
          .as(hostile)
          .isInstanceOf(IdempotencyKeyException.class)
          .hasMessageContaining("Time field 'when'")
          .hasMessageNotContaining("1844674407")
          .hasMessageNotContaining("1000000000");
    }
  }

  @Test
  void explicitKeysFingerprintTheirPayload() {
    IdempotencyKey first = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 30));
    IdempotencyKey same = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 30.0));
    IdempotencyKey changed = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 300));

    assertThat(first.value()).isEqualTo("default:payments.refund:key:order-42");
    assertThat(same).isEqualTo(first);
    assertThat(changed.value()).isEqualTo(first.value());
    assertThat(changed.fingerprint()).isNotEqualTo(first.fingerprint());
  }

  @Test
  void jacksonTreesAndMapsOfTheSameJsonMakeTheSameKey() throws Exception {
    Map<String, Object> map = Map.of("a", 1, "b", List.of(true, "x"));
    assertThat(IdempotencyKey.of("t", new ObjectMapper().readTree("{\"b\":[true,\"x\"],\"a\":1.0}")))
        .isEqualTo(IdempotencyKey.of("t", map));
  }

  @Test
  void unfingerprintableArgumentsGetATypedErrorSayingWhatToChange() {
    assertThatThrownBy(() -> IdempotencyKey.of("t", Map.of("x", Double.NaN)))
        .isInstanceOf(IdempotencyKeyException.class)
        .hasMessageContaining("NaN, which has no JSON form");

    List<Object> deep = new ArrayList<>();
    List<Object> cursor = deep;
    for (int i = 0; i < 500; i++) {
      List<Object> next = new ArrayList<>();
      cursor.add(next);
      cursor = next;
    }
    assertThatThrownBy(() -> IdempotencyKey.of("t", deep))
        .isInstanceOf(IdempotencyKeyException.class)
        .hasMessageContaining("nested deeper than");

    assertThatThrownBy(() -> IdempotencyKey.builder("book").quantise("when", Duration.ofMinutes(1))
        .args(Map.of("when", "yesterday")).build())
        .isInstanceOf(IdempotencyKeyException.class)
        .hasMessageContaining("not an ISO-8601 instant");

    assertThatThrownBy(() -> IdempotencyKey.of("bad:tool", Map.of()))
        .isInstanceOf(IdempotencyKeyException.class)
        .hasMessageContaining("contains ':'");

    assertThatThrownBy(() -> IdempotencyKey.builder("t").build())
        .isInstanceOf(IdempotencyKeyException.class)
        .hasMessageContaining("call args(..)");
  }

  /** A bean that refers to itself through another: Jackson would recurse until the stack overflows. */
  public static final class Node {
    public String name;
    public Node next;
  }

  @Test
  void cyclicObjectsGetATypedErrorNotAStackOverflow() {
    Node a = new Node();
    Node b = new Node();
    a.name = "a";
    b.name = "b";
    a.next = b;
    b.next = a;

    assertThatThrownBy(() -> IdempotencyKey.of("t", a))
        .isInstanceOf(IdempotencyKeyException.class)
        .hasMessageContaining("refer to themselves in a cycle");
  }

  @Test
  void hugeExponentsStayShort() {
    String value = IdempotencyKey.of("t", Map.of("n", new BigDecimal("1e1000000"))).value();
    assertThat(value).hasSize("default:t:sha256:".length() + 64);
    assertThat(IdempotencyKey.of("t", Map.of("n", new BigDecimal("1e1000000"))))
        .isEqualTo(IdempotencyKey.of("t", Map.of("n", new BigDecimal("10e999999"))));
  }

  /**
   * Regression found by {@code KeyFingerprintFuzzTest}: a lone surrogate has no UTF-8 form and was hashed as '?', so
   * {"a":"\uD800"}, {"a":"\uDFFF"} and {"a":"?"} made one key and one fingerprint: the second request would have
   * been answered with the first one's result, unnoticed.
   */
  @Test
  void loneSurrogatesAreRefusedRatherThanConfusedWithQuestionMarks() {
    for (String lone : List.of("\uD800", "a\uDFFF", "\uDBFFz")) {
      assertThatThrownBy(() -> IdempotencyKey.of("t", Map.of("a", lone)))
          .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("lone UTF-16 surrogate");
      assertThatThrownBy(() -> IdempotencyKey.of("t", Map.of(lone, 1)))
          .isInstanceOf(IdempotencyKeyException.class);
    }
    assertThat(IdempotencyKey.of("t", Map.of("a", "😀")).value())
        .isNotEqualTo(IdempotencyKey.of("t", Map.of("a", "?")).value());
  }

  @Test
  void toStringShowsTheNamespaceAndToolButNeitherTheArgumentsNorTheirHashNorTheClientKey() {
    IdempotencyKey key = IdempotencyKey.of("login", Map.of("password", "hunter2"));
    IdempotencyKey explicit = IdempotencyKey.explicit("acme", "login", "user-1234", Map.of("pin", 1234));
    assertThat(key.toString()).isEqualTo("default:login:…").doesNotContain(key.fingerprint());
    assertThat(explicit.toString()).isEqualTo("acme:login:…");
  }

  @Test
  void aNameMayHaveUpTo128CharactersAndTheErrorComesFromTheKey() {
    String longest = "t".repeat(IdempotencyKey.MAX_NAME_LENGTH);

    assertThat(IdempotencyKey.builder(longest).namespace(longest).args(Map.of()).build().tool()).isEqualTo(longest);
    assertThatThrownBy(() -> IdempotencyKey.of(longest + "t", Map.of()))
        .isInstanceOfSatisfying(IdempotencyKeyException.class, e -> {
          assertThat(e).hasMessageStartingWith("Idempotency tool (129 characters) is blank, longer than 128");
          assertThat(e.source()).isEqualTo("idempotency key");
        });
  }

  @Test
  void aQuantisationBucketMustBeAtLeastOneMillisecond() {
    for (Duration tooShort : new Duration[] {Duration.ZERO, Duration.ofNanos(999_999), Duration.ofMinutes(-5)}) {
      assertThatThrownBy(() -> IdempotencyKey.builder("book").quantise("clientTime", tooShort))
          .as(tooShort.toString()).isInstanceOf(IdempotencyKeyException.class)
          .hasMessage("Quantisation bucket for 'clientTime' is " + tooShort + ": give at least one millisecond");
    }
    assertThat(IdempotencyKey.builder("book").quantise("clientTime", Duration.ofMillis(1))
        .args(Map.of("clientTime", 1_234L)).build())
        .isEqualTo(IdempotencyKey.of("book", Map.of("clientTime", 1_234L)));
  }

  @Test
  void equalKeysHaveEqualHashCodesAndDistinctKeysSpreadOverThem() {
    assertThat(IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 30)).hashCode())
        .isEqualTo(IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 30)).hashCode());
    Set<Integer> hashCodes = new HashSet<>();
    for (int order = 0; order < 1_000; order++) {
      hashCodes.add(IdempotencyKey.explicit("payments.refund", "order-" + order, Map.of("amount", 30)).hashCode());
    }
    assertThat(hashCodes).hasSizeGreaterThan(990);
  }
}
