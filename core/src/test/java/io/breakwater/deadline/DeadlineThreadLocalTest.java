package io.breakwater.deadline;

import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

class DeadlineThreadLocalTest {

  @AfterEach
  void resetHooks() {
    Hooks.disableAutomaticContextPropagation();
  }

  @Test
  void blockingCodeOnBoundedElasticSeesTheDeadline() {
    Hooks.enableAutomaticContextPropagation();

    String seen = Mono.fromCallable(() -> Deadline.current().map(Deadline::name).orElse("none"))
        .subscribeOn(Schedulers.boundedElastic())
        .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(30)).name("plan-trip").build()))
        .block(Duration.ofSeconds(10));

    assertThat(seen).isEqualTo("plan-trip");
  }

  @Test
  void nothingLeaksOntoTheThreadAfterwards() {
    Hooks.enableAutomaticContextPropagation();
    Mono.fromCallable(() -> Deadline.current().isPresent())
        .subscribeOn(Schedulers.boundedElastic())
        .transformDeferred(withDeadline(Duration.ofSeconds(30)))
        .block(Duration.ofSeconds(10));

    Boolean leaked = Mono.fromCallable(() -> Deadline.current().isPresent())
        .subscribeOn(Schedulers.boundedElastic())
        .block(Duration.ofSeconds(10));

    assertThat(leaked).isFalse();
  }
}
