package io.breakwater.issues;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Incident 5: the model asked for orders that did not exist; the 404s opened the order service's breaker and every
 * user lost the tool. Breakwater's breaker ignores 4xx: it stays closed, and valid lookups keep working.
 */
class ClientErrorsOpenedBreakerIncidentTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  final AtomicInteger requests = new AtomicInteger();

  Mono<String> lookup(String order) {
    return Mono.defer(() -> {
      requests.incrementAndGet();
      return order.startsWith("missing") ? Mono.error(new HttpStatusException(404)) : Mono.just("order " + order);
    });
  }

  @Test
  void fiftyNotFoundsLeaveTheBreakerClosedAndTheToolUsable() {
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).minimumCalls(5).failureRateThreshold(0.5)
            .meterRegistry(new SimpleMeterRegistry()).build())
        .build();
    Tool<String, String> orders = Tool.of(ToolDescriptor.builder("orders.get").sideEffect(SideEffect.READ_ONLY)
            .breakers(breakers).meterRegistry(new SimpleMeterRegistry()).eventLog(e -> { }).build(),
        this::lookup, String.class);

    // fifty users' agents each ask once for an order that does not exist
    StepVerifier.withVirtualTime(() -> Flux.range(0, 50).concatMap(i -> orders.outcome("missing-" + i))
            .filter(o -> o instanceof ToolOutcome.Failure<String> f && f.forModel().contains("kind: client_error"))
            .count()
            .flatMap(notFound -> orders.call("A-17").map(found -> notFound + " not found, then " + found
                + ", breaker " + breakers.breaker("orders.get").state())))
        .expectNext("50 not found, then order A-17, breaker CLOSED")
        .expectComplete().verify(VERIFY);
    // each 404 was tried once (not retried), and the valid lookup reached the service
    assertThat(requests).hasValue(51);
  }
}
