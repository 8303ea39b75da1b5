package io.breakwater.idempotency;

import static io.breakwater.Breakwater.idempotentBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Issue 15, medium 6 and 7 and the low findings on keys: what a store, a message and a log see of a key, and which
 * keys are refused.
 */
class KeyedHashesTest {

  private static final byte[] OTHER_SECRET = "another 32-byte secret, rotated!".getBytes(StandardCharsets.US_ASCII);

  private final List<String> storeKeys = new ArrayList<>();
  private final List<String> fingerprints = new ArrayList<>();
  private final IdempotencyStore recording = new DelegatingStore(IdempotencyStore.inMemory()) {
    @Override
    public Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease) {
      storeKeys.add(key);
      fingerprints.add(fingerprint);
      return super.claim(key, fingerprint, owner, lease);
    }
  };

  @Test
  void theStoreSeesKeyedHashesNeverTheArgumentsTheirPlainHashOrTheClientKey() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(recording).keySecret(DelegatingStore.SECRET).build();
    IdempotencyKey derived = IdempotencyKey.builder("accounts.unlock").namespace("acme")
        .args(Map.of("account", "a-1", "pin", 4821)).build();
    IdempotencyKey explicit = IdempotencyKey.explicit("acme", "payments.refund", "order-42", Map.of("pin", 4821));
    Mono.just("ok").transformDeferred(idempotentBy(derived, policy, String.class)).block();
    Mono.just("ok").transformDeferred(idempotentBy(explicit, policy, String.class)).block();

    assertThat(storeKeys.get(0)).matches("acme:accounts\\.unlock:args:[0-9a-f]{64}")
        .doesNotContain(derived.fingerprint());
    assertThat(storeKeys.get(1)).matches("acme:payments\\.refund:key:[0-9a-f]{64}").doesNotContain("order-42");
    assertThat(fingerprints).allMatch(f -> f.matches("[0-9a-f]{64}"))
        .doesNotContain(derived.fingerprint(), explicit.fingerprint());
    // a guess of the PIN cannot be checked against the store without the secret
    IdempotencyPolicy guesser = IdempotencyPolicy.builder(recording).keySecret(OTHER_SECRET).build();
    assertThat(guesser.storeKey(derived)).isNotEqualTo(storeKeys.get(0));
    assertThat(policy.storeKey(derived)).as("stable for one secret").isEqualTo(storeKeys.get(0));
  }

  @Test
  void messagesNameAKeyByAShortKeyedTagAndNeverQuoteAFingerprint() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(recording).keySecret(DelegatingStore.SECRET).build();
    IdempotencyKey first = IdempotencyKey.explicit("acme", "accounts.unlock", "u-1", Map.of("pin", 4821));
    IdempotencyKey other = IdempotencyKey.explicit("acme", "accounts.unlock", "u-1", Map.of("pin", 1111));
    Mono.just("ok").transformDeferred(idempotentBy(first, policy, String.class)).block();

    StepVerifier.create(Mono.just("ok").transformDeferred(idempotentBy(other, policy, String.class)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IdempotencyKeyMismatchException.class)
            .hasMessageContaining(policy.tag(first))
            .hasMessageNotContaining("u-1")
            .hasMessageNotContaining(first.fingerprint().substring(0, 8))
            .hasMessageNotContaining(fingerprints.get(0).substring(0, 8))
            .hasMessageNotContaining(other.fingerprint().substring(0, 8)))
        .verify();
    assertThat(policy.tag(first)).matches("acme:accounts\\.unlock:#[0-9a-f]{8}");
  }

  @Test
  void explicitKeysAreValidatedPrintableShortAndWithoutBraces() {
    for (String bad : List.of("a\nb", "a\rINFO forged", "{tag}", "a}", "\u202Eevil", "a\u0000", " ", "",
        "x".repeat(257), "x".repeat(16 << 20), "\uD800")) {
      assertThatThrownBy(() -> IdempotencyKey.explicit("payments.refund", bad, Map.of()))
          .isInstanceOf(IdempotencyKeyException.class)
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain(bad.isBlank() ? "\u0001" : bad));
    }
    assertThat(IdempotencyKey.explicit("payments.refund", "x".repeat(256), Map.of()).value()).endsWith("x");
    assertThat(IdempotencyKey.explicit("payments.refund", "Bestellung Nr. 42 – ü 😀", Map.of()).value())
        .endsWith("😀");
    for (String badName : List.of("a{b", "tenant}", "a b", "a:b", "n".repeat(129))) {
      assertThatThrownBy(() -> IdempotencyKey.builder("t").namespace(badName).args(Map.of()).build())
          .isInstanceOf(IdempotencyKeyException.class);
    }
  }

  @Test
  void explicitKeyPayloadsCanLeaveOutTransientFields() {
    IdempotencyKey first = IdempotencyKey.builder("orders.cancel").clientKey("order-7")
        .args(Map.of("reason", "late", "requestId", "r-1")).excluding("requestId").build();
    IdempotencyKey retry = IdempotencyKey.builder("orders.cancel").clientKey("order-7")
        .args(Map.of("reason", "late", "requestId", "r-2")).excluding("requestId").build();

    assertThat(retry).isEqualTo(first);
    assertThat(first.isExplicit()).isTrue();
    assertThat(first.value()).isEqualTo("default:orders.cancel:key:order-7");
  }

  @Test
  void maxResultBytesCountsUtf8BytesNotUtf16Characters() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(IdempotencyStore.inMemory()).maxResultBytes(1_000).build();
    String accents = "é".repeat(600);            // 600 UTF-16 characters, 1 200 UTF-8 bytes (+ 2 quotes)
    IdempotencyKey key = IdempotencyKey.explicit("t", "k", Map.of());
    StepVerifier.create(Mono.just(accents).transformDeferred(idempotentBy(key, policy, String.class)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IdempotencyLimitException.class)
            .hasMessageContaining("1202 bytes of JSON (UTF-8)"))
        .verify();
    assertThat(IdempotencyStore.Outcome.success("\"" + accents + "\"").size()).isEqualTo(1202);
  }

  @Test
  void keptFailureMessagesAreBounded() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(IdempotencyStore.inMemory()).cacheNonRetryableFailures(true)
        .build();
    IdempotencyKey key = IdempotencyKey.explicit("t", "k", Map.of());
    Mono<String> refused = Mono.error(new io.breakwater.failure.HttpStatusException(422, Map.of(), "y".repeat(5_000)));
    StepVerifier.create(refused.transformDeferred(idempotentBy(key, policy, String.class))).expectError().verify();
    StepVerifier.create(refused.transformDeferred(idempotentBy(key, policy, String.class)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(CachedFailureException.class)
            .satisfies(c -> assertThat(c.getMessage().length())
                .isLessThanOrEqualTo(IdempotencyPolicy.MAX_FAILURE_MESSAGE_CHARS + 1)))
        .verify();
  }

  @Test
  void sharedStoresNeedASecretAndHostileDurationsAreRefusedAtBuildTime() {
    assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyPolicy.of(recording))
        .withMessageContaining("needs keySecret(..)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> IdempotencyPolicy.builder(recording).keySecret(new byte[16]))
        .withMessageContaining("at least 32");
    IdempotencyPolicy.Builder builder = IdempotencyPolicy.builder(IdempotencyStore.inMemory());
    assertThatIllegalArgumentException()
        .isThrownBy(() -> builder.ttl(Duration.ofSeconds(Long.MAX_VALUE)).lease(Duration.ofSeconds(Long.MAX_VALUE))
            .build())
        .withMessageContaining("at most ten years");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> IdempotencyPolicy.builder(IdempotencyStore.inMemory()).lease(Duration.ofSeconds(-1)).build())
        .withMessageContaining("positive");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> IdempotencyPolicy.builder(IdempotencyStore.inMemory()).storeTimeout(Duration.ZERO).build())
        .withMessageContaining("storeTimeout");
  }
}
