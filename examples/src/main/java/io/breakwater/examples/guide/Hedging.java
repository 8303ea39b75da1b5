package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.examples.guide.Domain.Flights;
import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmStreamClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The snippets of {@code docs/hedging.md}; {@code HedgingTest} and {@code HedgingIT} run them. */
public final class Hedging {

  private Hedging() {}

  // snippet:hedge-call
  public static Mono<Offers> search(Flights flights, HedgePolicy hedge, RetryPolicy retry, Query query) {
    Mono<Offers> offers = flights.search(query)
        .transformDeferred(perCallTimeout())                          // every attempt gets its own timeout
        .transformDeferred(hedgedBy(hedge))                           // a backup attempt for a slow one
        .transformDeferred(retryWithBudget(retry))                    // a retry comes after every attempt failed
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));
    return offers;
  }
  // end-snippet

  public static HedgePolicy policy() {
    // snippet:hedge-policy
    HedgePolicy hedge = HedgePolicy.builder()
        .name("flights")            // the meters' dependency tag
        .delayPercentile(95)        // hedge once a call is slower than 95 % of recent answers (the default)
        .maxHedges(1)               // one backup attempt per call (the default)
        .budget(0.1)                // hedges stay under 10 % of calls (the default)
        .build();
    // end-snippet
    return hedge;
  }

  public static HedgePolicy fixedPolicy() {
    // snippet:hedge-fixed
    HedgePolicy hedge = HedgePolicy.builder().name("flights").delay(Duration.ofMillis(300)).build();
    // end-snippet
    return hedge;
  }

  // snippet:hedge-alternates
  public static Mono<Offers> searchTwoRegions(Flights usEast, Flights euWest, HedgePolicy hedge, Query query) {
    Mono<Offers> offers = usEast.search(query)
        .transformDeferred(hedgedBy(hedge, List.of(() -> euWest.search(query))));   // the hedge goes to eu-west
    return offers;
  }
  // end-snippet

  // snippet:hedge-llm-client
  public static LlmStreamClient hedgedClient(String baseUrl, HedgePolicy firstToken) {
    LlmStreamClient llm = LlmStreamClient.builder(baseUrl, Dialect.OPENAI_CHAT)
        .hedge(firstToken)   // no content by the hedge delay: a second stream; the first with content wins
        .build();
    return llm;
  }
  // end-snippet

  // snippet:hedge-first-token
  public static Flux<String> answer(LlmStreamClient llm, HedgePolicy firstToken, String question) {
    Flux<String> answer = llm.stream(Map.of("model", "gpt-4o-mini",
            "messages", List.of(Map.of("role", "user", "content", question))))
        .transformDeferred(hedgedBy(firstToken, LlmDelta::isContent))   // content, not framing
        .ofType(LlmDelta.Text.class).map(LlmDelta.Text::text);
    return answer;
  }
  // end-snippet
}
