package io.breakwater.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;
import reactor.util.context.Context;

/** {@link ContextKeys}: private keys that a user's own entries cannot collide with, readable in a printed Context. */
class ContextKeysTest {

  @Test
  void aKeyShowsItsNameWhenAContextIsPrinted() {
    assertThat(Context.of(ContextKeys.DEADLINE, "d").toString()).contains("breakwater.deadline=d");
    assertThat(ContextKeys.STORE_CALL_BOUND).hasToString("breakwater.storeCallBound");
  }

  @Test
  void anEntryUnderTheKeysNameIsNotTheKey() {
    Context forged = Context.of("breakwater.deadline", "forged", "breakwater.idempotencyKey", "forged");

    assertThat(forged.hasKey(ContextKeys.DEADLINE)).isFalse();
    assertThat(forged.hasKey(ContextKeys.IDEMPOTENCY_KEY)).isFalse();
  }

  @Test
  void everyKeyIsDistinct() {
    assertThat(Set.of(ContextKeys.DEADLINE, ContextKeys.SIDE_EFFECT, ContextKeys.IDEMPOTENCY_KEY,
        ContextKeys.IDEMPOTENCY_SENT_KEY, ContextKeys.IDEMPOTENCY_CONTEXT, ContextKeys.TASK_RETRY_BUDGET,
        ContextKeys.RESUME_POSITION, ContextKeys.TASK_STATE, ContextKeys.HEDGED, ContextKeys.STORE_CALL_BOUND))
        .hasSize(10);
  }
}
