package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.examples.guide.Domain.Flights;
import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import reactor.core.publisher.Mono;

/** The snippet of {@code docs/agent.md}; {@code AgentsTest} runs it. */
public final class Agents {

  private Agents() {}

  // snippet:agent-tool
  public static Mono<String> searchFlights(Flights client, CircuitBreakerRegistry breakers, Query query) {
    ToolDescriptor searchFlights = ToolDescriptor.builder("flights.search")
        .sideEffect(SideEffect.READ_ONLY)
        .timeouts(CallTimeouts.adaptive().percentile(99).build())    // learnt per tool; 30 s until 50 calls and 1 min
        .retry(RetryPolicy.builder().name("flights").maxRetries(2).build())
        .breakers(breakers)                                          // a CircuitBreakerRegistry shared by all tools
        .alternates("flights.searchCached")                          // named to the model in failure feedback
        .logArgs("from", "to", "date")                               // fields written in call events
        .build();

    Tool<Query, Offers> flights = Tool.of(searchFlights, client::search, Offers.class)
        .withFallbacks(Fallbacks.<Query, Offers>builder()
            .stale(Duration.ofMinutes(30))                           // last good answer for the same arguments
            .orDefault(q -> Offers.none())
            .build());

    TaskBudget budget = TaskBudget.builder(Duration.ofSeconds(30)).name("plan-trip")
        .retries(5).maxSteps(20).tokens(50_000).build();

    Mono<String> forModel = flights.outcome(query).map(ToolOutcome::forModel)   // a value, or feedback; never an error
        .transformDeferred(withTaskBudget(budget));                              // around the whole task in practice
    return forModel;
  }
  // end-snippet
}
