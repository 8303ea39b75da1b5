package io.breakwater.examples.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

class ClaimAwareRefundsTest {

  private static final byte[] SECRET = "an example 32-byte secret, really".getBytes(StandardCharsets.US_ASCII);

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  private final IdempotencyStore store = IdempotencyStore.inMemory(16L << 20, () -> clock);
  private final List<String> refunds = new CopyOnWriteArrayList<>();
  private final Map<String, String> byKey = new ConcurrentHashMap<>();
  private final ClaimAwareRefunds.RefundApi payments = new ClaimAwareRefunds.RefundApi() {
    @Override
    public Mono<String> refund(String orderId, String idempotencyKey) {
      return Mono.fromCallable(() -> {
        refunds.add(orderId);
        byKey.put(idempotencyKey, "refund of " + orderId);
        return "refund of " + orderId;
      });
    }

    @Override
    public Mono<String> findRefund(String idempotencyKey) {
      return Mono.justOrEmpty(byKey.get(idempotencyKey));
    }
  };

  @Test
  void aRefundRunsOnceAndATakeOverAsksThePaymentSystemFirst() {
    ClaimAwareRefunds service = new ClaimAwareRefunds(payments, store, SECRET);
    StepVerifier.create(service.refund("o-1")).expectNext("refund of o-1").verifyComplete();
    StepVerifier.create(service.refund("o-1")).expectNext("refund of o-1").verifyComplete();
    assertThat(refunds).containsExactly("o-1");

    // an owner elsewhere paid o-2, then died before recording it; its lease has run out
    IdempotencyPolicy same = IdempotencyPolicy.builder(store).keySecret(SECRET).build();
    IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "o-2", "o-2");
    store.claim(same.storeKey(key), same.storeFingerprint(key), "dead-owner", Duration.ofSeconds(30)).block();
    byKey.put(same.sentKey(key), "refund of o-2 (by the dead owner)");
    clock.advanceTimeBy(Duration.ofSeconds(31));

    StepVerifier.create(service.refund("o-2")).expectNext("refund of o-2 (by the dead owner)").verifyComplete();
    assertThat(refunds).containsExactly("o-1");
    assertThat(service.unrecorded()).isEmpty();
  }
}
