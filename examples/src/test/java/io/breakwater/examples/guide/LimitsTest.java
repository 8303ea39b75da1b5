package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.examples.guide.Limits.Completion;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The snippets of docs/limits.md, in virtual time. */
class LimitsTest {

  @Test
  void tenSearchesRunAtOnceAndTheRestWaitForAPermit() {
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> {
          ConcurrencyLimit flights = Limits.flights();
          return Flux.range(0, 25).flatMap(i -> Limits.search(query -> Mono.defer(() -> {
          most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
          return Mono.delay(Duration.ofMillis(500)).thenReturn(new Offers(List.of("AF123")))
              .doOnTerminate(inFlight::decrementAndGet);
          }), flights, new Query("CDG", "JFK", "2025-07-01")));
        })
        .thenAwait(Duration.ofSeconds(10))
        .expectNextCount(25)
        .verifyComplete();
    assertThat(most).hasValue(10);
  }

  @Test
  void anAdaptiveLimitStartsWhereItIsTold() {
    ConcurrencyLimit search = Limits.adaptive();
    assertThat(search.limit()).isEqualTo(10);
    assertThat(search.name()).isEqualTo("search");
  }

  @Test
  void aToolSpendsFromTheTaskTheUsageItsRateLimitCounted() {
    StepVerifier.withVirtualTime(() -> {
          RateLimit openai = Limits.openAi();
          Tool<String, Completion> ask = Tool.of(Limits.tool(openai),
              (String prompt) -> Mono.just(new Completion("Paris", 1_200, Map.of())), Completion.class);
          return ask.call("Capital of France?")
              .then(Mono.deferContextual(ctx -> Mono.just(TaskBudget.remaining(ctx).tokens())))
              .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(1)).tokens(10_000).build()))
              .map(left -> left + " " + openai.availableTokens());
        })
        .expectNext("8800 198800")
        .verifyComplete();
  }

  @Test
  void aCallTakesItsEstimateAndGivesBackWhatItDidNotUse() {
    StepVerifier.withVirtualTime(() -> {
          RateLimit openai = Limits.openAi();
          return Limits.answer((prompt, max) -> Mono.just(new Completion("Paris", 1_200, Map.of(
                  "x-ratelimit-remaining-tokens", List.of("199000")))), openai, "Capital of France?", 1_000)
              .zipWith(Mono.fromCallable(openai::availableTokens));
        })
        .assertNext(t -> {
          assertThat(t.getT1()).isEqualTo("Paris");
          assertThat(t.getT2()).as("1800 taken, 600 given back; the provider says 199000 left").isEqualTo(198_800);
        })
        .verifyComplete();
  }

  @Test
  void aCallThatCouldNotRunBeforeItsDeadlineGetsAnAnswerAtOnce() {
    List<String> answers = new ArrayList<>();
    StepVerifier.withVirtualTime(() -> {
          RateLimit openai = Limits.openAi();
          Limits.Llm llm = (prompt, max) -> Mono.just(new Completion("ok", 160_000, Map.of()));
          return Limits.answer(llm, openai, "long", 160_000 - 800)     // 160 000 of the minute's 200 000 tokens
              .concatWith(Limits.answer(llm, openai, "long", 160_000 - 800));   // would wait 36 s: past 30 s
        })
        .recordWith(() -> answers)
        .expectNextCount(2)
        .verifyComplete();
    assertThat(answers).containsExactly("ok", "The model is busy; try again in 36 s.");
  }
}
