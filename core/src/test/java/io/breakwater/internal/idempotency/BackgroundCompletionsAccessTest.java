package io.breakwater.internal.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * {@code idempotentBy} reaches each policy's background completions, and nothing outside the policy and its operator
 * can change which.
 */
class BackgroundCompletionsAccessTest {

  @Test
  void noStaticHookCanRebindHowAPolicyReachesItsBackgroundCompletions() {
    assertThat(Arrays.stream(BackgroundCompletions.class.getDeclaredMethods())
        .filter(m -> Modifier.isStatic(m.getModifiers()) && !m.isSynthetic())
        .map(Method::toGenericString))
        .containsExactly("public static io.breakwater.internal.idempotency.BackgroundCompletions"
            + " io.breakwater.internal.idempotency.BackgroundCompletions.of("
            + "io.breakwater.idempotency.IdempotencyPolicy)");
    assertThat(Arrays.stream(BackgroundCompletions.class.getDeclaredFields())
        .filter(f -> Modifier.isStatic(f.getModifiers()) && !Modifier.isFinal(f.getModifiers()))
        .map(Field::toGenericString))
        .as("mutable static fields")
        .isEmpty();
  }

  @Test
  void eachPolicyReachesItsOwnBackgroundCompletions() {
    IdempotencyPolicy one = policy();
    IdempotencyPolicy other = policy();

    BackgroundCompletions ofOne = BackgroundCompletions.of(one);
    assertThat(ofOne.tryStart()).isTrue();

    assertThat(BackgroundCompletions.of(one)).isSameAs(ofOne).isNotSameAs(BackgroundCompletions.of(other));
    assertThat(BackgroundCompletions.of(one).running()).isOne();
    assertThat(BackgroundCompletions.of(other).running()).isZero();
    ofOne.finished();
  }

  private static IdempotencyPolicy policy() {
    return IdempotencyPolicy.builder(IdempotencyStore.inMemory()).maxBackgroundCompletions(1).build();
  }
}
