package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.breaker.BreakerStateStore;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.breaker.StateTransition;
import io.breakwater.examples.guide.Domain.Forecast;
import io.breakwater.examples.guide.Domain.Weather;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The snippets of {@code docs/breaker.md}; {@code BreakersTest} runs them in virtual time. */
public final class Breakers {

  private Breakers() {}

  // snippet:breaker-guard
  public static Function<String, Mono<Forecast>> forecasts(Weather client, RetryPolicy policy) {
    CircuitBreaker breaker = CircuitBreaker.builder("weather")
        .failureRateThreshold(0.5)
        .minimumCalls(20)
        .openDuration(Duration.ofSeconds(30))
        .build();

    Function<String, Mono<Forecast>> forecast = city -> client.forecast(city)
        .transformDeferred(perCallTimeout())      // a hung call ends as TIMEOUT, which the breaker counts
        .transformDeferred(guardedBy(breaker))    // every attempt passes the breaker
        .transformDeferred(retryWithBudget(policy));
    return forecast;
  }
  // end-snippet

  public static CircuitBreakerRegistry registry() {
    // snippet:breaker-registry
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).failureRateThreshold(0.3).build())   // tools (and families)
        .familyBreakers(name -> CircuitBreaker.builder(name).minimumCalls(50).build())      // optional
        .familyOf(CircuitBreakerRegistry::prefixFamily)                                     // the default
        .build();
    // end-snippet
    return breakers;
  }

  // snippet:breaker-registry-use
  public static Mono<String> send(CircuitBreakerRegistry breakers, Function<String, Mono<String>> gmail,
      String draft) {
    return gmail.apply(draft).transformDeferred(guardedBy(breakers, "gmail.send"));
  }
  // end-snippet

  /**
   * A {@link BreakerStateStore} that tells an audit log about every transition a breaker of this instance makes, and
   * leaves the rest to the store it decorates (in memory, or Redis to share state across instances).
   */
  // snippet:breaker-state-store
  public record AuditedStateStore(BreakerStateStore delegate, Consumer<StateTransition> audit)
      implements BreakerStateStore {

    @Override
    public Mono<Void> publish(StateTransition transition) {           // a transition this instance made
      return delegate.publish(transition).doOnSuccess(done -> audit.accept(transition));
    }

    @Override
    public Flux<StateTransition> transitions(String breaker) {        // every transition published for it
      return delegate.transitions(breaker);
    }

    @Override
    public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {   // a half-open probe permit
      return delegate.claimProbe(breaker, permits, lease);
    }

    @Override
    public Mono<Void> releaseProbe(String breaker) {
      return delegate.releaseProbe(breaker);
    }
  }
  // end-snippet
}
