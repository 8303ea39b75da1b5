package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.BreakerStateStore;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.breaker.StateTransition;
import io.breakwater.examples.guide.Breakers.AuditedStateStore;
import io.breakwater.examples.guide.Domain.Forecast;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

class BreakersTest {

  @Test
  void twentyFailedForecastsOpenTheBreakerAndTheNextCallNeverReachesTheClient() {
    AtomicInteger calls = new AtomicInteger();
    RetryPolicy noRetries = RetryPolicy.builder().name("weather").maxRetries(0).build();
    Function<String, Mono<Forecast>> forecast = Breakers.forecasts(
        city -> Mono.defer(() -> {
          calls.incrementAndGet();
          return Mono.error(new HttpStatusException(503));
        }), noRetries);

    for (int i = 0; i < 20; i++) {
      assertThat(forecast.apply("Lyon").onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(5))).isNull();
    }
    Object rejected = forecast.apply("Lyon").map(Object.class::cast).onErrorResume(Mono::just)
        .block(Duration.ofSeconds(5));

    assertThat(calls).hasValue(20);
    assertThat(rejected).isInstanceOf(CircuitBreakerOpenException.class);
  }

  @Test
  void theRegistryGivesEachToolABreakerInItsFamily() {
    CircuitBreakerRegistry breakers = Breakers.registry();

    String sent = Breakers.send(breakers, draft -> Mono.just("sent " + draft), "hello").block(Duration.ofSeconds(5));

    assertThat(sent).isEqualTo("sent hello");
    assertThat(breakers.breaker("gmail.send").name()).isEqualTo("gmail.send");
    assertThat(breakers.family("gmail.send")).map(CircuitBreaker::name).contains("gmail");
  }

  @Test
  void theAuditedStoreSeesEveryTransitionAndDelegatesTheRest() {
    List<StateTransition> audit = Collections.synchronizedList(new ArrayList<>());
    CircuitBreaker breaker = CircuitBreaker.builder("search").minimumCalls(2).failureRateThreshold(0.5)
        .stateStore(new AuditedStateStore(BreakerStateStore.inMemory(), audit::add)).build();

    for (int i = 0; i < 2; i++) {
      Mono.error(new HttpStatusException(503)).transformDeferred(io.breakwater.Breakwater.guardedBy(breaker))
          .onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(5));
    }

    assertThat(audit).extracting(StateTransition::to).containsExactly(CircuitBreaker.State.OPEN);
  }
}
