package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class AgentsTest {

  private final Query query = new Query("LYS", "LIS", "2026-12-24");

  @Test
  void theModelGetsTheToolsAnswer() {
    StepVerifier.withVirtualTime(() -> Agents.searchFlights(q -> Mono.just(new Offers(List.of("BW123", "BW456"))),
            CircuitBreakerRegistry.ofDefaults(), query))
        .assertNext(forModel -> assertThat(forModel).contains("BW123").contains("BW456"))
        .verifyComplete();
  }

  @Test
  void anOutageEndsInTheDefaultFallbackNotAnError() {
    AtomicInteger calls = new AtomicInteger();

    StepVerifier.withVirtualTime(() -> Agents.searchFlights(q -> Mono.defer(() -> {
              calls.incrementAndGet();
              return Mono.<Offers>error(new HttpStatusException(503));
            }), CircuitBreakerRegistry.ofDefaults(), query))
        .thenAwait(Duration.ofSeconds(30))
        .assertNext(forModel -> assertThat(forModel).contains("(default: the tool failed").doesNotContain("BW"))
        .verifyComplete();
    assertThat(calls).as("the first attempt and two retries").hasValue(3);
  }
}
