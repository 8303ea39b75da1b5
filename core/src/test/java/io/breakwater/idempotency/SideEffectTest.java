package io.breakwater.idempotency;

import static io.breakwater.Breakwater.sideEffect;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class SideEffectTest {

  @Test
  void declaredSideEffectIsVisibleUpstreamOnMonoAndFlux() {
    StepVerifier.create(Mono.deferContextual(ctx -> Mono.justOrEmpty(SideEffect.from(ctx)))
            .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)))
        .expectNext(SideEffect.NON_IDEMPOTENT_WRITE)
        .verifyComplete();
    StepVerifier.create(Flux.deferContextual(ctx -> Mono.justOrEmpty(SideEffect.from(ctx)))
            .transformDeferred(sideEffect(SideEffect.READ_ONLY)))
        .expectNext(SideEffect.READ_ONLY)
        .verifyComplete();
  }

  @Test
  void undeclaredSideEffectIsAbsent() {
    StepVerifier.create(Mono.deferContextual(ctx -> Mono.justOrEmpty(SideEffect.from(ctx))))
        .verifyComplete();
  }
}
