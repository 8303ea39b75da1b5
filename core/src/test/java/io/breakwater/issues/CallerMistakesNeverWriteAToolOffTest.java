package io.breakwater.issues;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Issue 14, defect 9: a refusal caused by the caller's own arguments ({@code INVALID_ARGUMENT}, {@code CLIENT_ERROR})
 * wrote the tool off for the task as {@code CIRCUIT_OPEN}; the write-off then triggered the fallbacks, so the model
 * got a made-up default as a success and was told to switch tools instead of fixing its argument, and a valid call
 * after three unknown ids was never made.
 */
class CallerMistakesNeverWriteAToolOffTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  record Lookup(String productId) {}

  final AtomicInteger requests = new AtomicInteger();
  final AtomicInteger alternateCalls = new AtomicInteger();

  Mono<String> catalog(Lookup lookup) {
    return Mono.defer(() -> {
      requests.incrementAndGet();
      if (!lookup.productId().matches("\\d+")) {
        return Mono.error(new HttpStatusException(422, Map.of(), "product_id must be numeric"));
      }
      return lookup.productId().startsWith("9") ? Mono.error(new HttpStatusException(404, Map.of(), "no such product"))
          : Mono.just("product " + lookup.productId());
    });
  }

  ToolDescriptor.Builder descriptor() {
    return ToolDescriptor.builder("catalog.get_product").sideEffect(SideEffect.READ_ONLY)
        .alternates("catalog.query_product_mysql")
        .meterRegistry(new SimpleMeterRegistry()).eventLog(e -> { });
  }

  Tool<Lookup, String> tool(ToolDescriptor descriptor) {
    return Tool.of(descriptor, this::catalog, String.class)
        .withFallbacks(Fallbacks.<Lookup, String>builder()
            .alternate("catalog.query_product_mysql", l -> Mono.fromSupplier(() -> {
              alternateCalls.incrementAndGet();
              return "mysql row for " + l.productId();
            }))
            .orDefault("product unknown")
            .build());
  }

  static <T> Mono<T> inTask(Mono<T> work) {
    return work.transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(5)).build()));
  }

  /** Scenario A: ten calls with the same invalid argument. */
  @Test
  void theSameInvalidArgumentTenTimesIsNeverAnsweredByAFallbackAndTheFeedbackKeepsAskingForTheFix() {
    Tool<Lookup, String> products = tool(descriptor().build());
    StepVerifier.withVirtualTime(() -> inTask(Flux.range(0, 10).concatMap(i -> products.outcome(new Lookup("abc")))
            .collectList()
            .zipWith(products.outcome(new Lookup("42")))))
        .assertNext(result -> {
          List<ToolOutcome<String>> invalid = result.getT1();
          assertThat(invalid).hasSize(10).allSatisfy(o -> {
            assertThat(o).isInstanceOf(ToolOutcome.Failure.class);
            ToolOutcome.Failure<String> failure = (ToolOutcome.Failure<String>) o;
            assertThat(failure.feedback().kind()).isEqualTo(FailureKind.INVALID_ARGUMENT);
            assertThat(failure.forModel()).contains("product_id must be numeric", "next: fix the arguments")
                .doesNotContain("query_product_mysql", "circuit_open");
          });
          // repeats of the same call are refused without a request, and the refusal still explains the argument
          assertThat(((ToolOutcome.Failure<String>) invalid.get(9)).feedback().reason())
              .contains("product_id must be numeric", "not sent again");
          // the tool was not written off: a valid product id is still looked up by the tool itself
          assertThat(result.getT2()).isEqualTo(new ToolOutcome.Success<>("product 42", ToolOutcome.Source.TOOL, null));
        })
        .expectComplete().verify(VERIFY);
    assertThat(alternateCalls).hasValue(0);
    // one request with "abc" (then refused without a request), one with "42"
    assertThat(requests).hasValue(2);
  }

  /** Scenario B: three unknown ids (404), then a valid one, inside one task. */
  @Test
  void unknownIdsNeverWriteTheToolOffForOtherIds() {
    Tool<Lookup, String> products = tool(descriptor().build());
    StepVerifier.withVirtualTime(() -> inTask(Flux.just("901", "902", "903").concatMap(id -> products.outcome(
                new Lookup(id)))
            .map(o -> ((ToolOutcome.Failure<String>) o).feedback().kind())
            .collectList()
            .zipWith(products.call(new Lookup("17")))))
        .assertNext(result -> {
          assertThat(result.getT1()).containsOnly(FailureKind.CLIENT_ERROR);
          assertThat(result.getT2()).isEqualTo("product 17");
        })
        .expectComplete().verify(VERIFY);
    assertThat(requests).hasValue(4);
    assertThat(alternateCalls).hasValue(0);
  }

  @Test
  void fallbacksCannotBeSetToAnswerTheCallersOwnMistakes() {
    for (FailureKind kind : List.of(FailureKind.INVALID_ARGUMENT, FailureKind.CLIENT_ERROR)) {
      assertThatThrownBy(() -> Fallbacks.<Lookup, String>builder().orDefault("x").on(FailureKind.TIMEOUT, kind))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(kind.name());
    }
  }

  /** A tool written off for a failure of the dependency still gets its fallbacks: the decision is the cause's. */
  @Test
  void aToolWrittenOffForServerErrorsStillFallsBackButOneRefusingTheSameArgumentsDoesNot() {
    AtomicInteger calls = new AtomicInteger();
    Tool<Lookup, String> failing = Tool.of(descriptor().unavailableAfter(FailureKind.SERVER_ERROR, 1)
            .retry(io.breakwater.retry.RetryPolicy.builder().name("catalog").maxRetries(0).build()).build(),
        (Lookup l) -> Mono.<String>error(new HttpStatusException(503)).doOnSubscribe(s -> calls.incrementAndGet()),
        String.class)
        .withFallbacks(Fallbacks.<Lookup, String>builder().orDefault("product unknown").build());
    StepVerifier.withVirtualTime(() -> inTask(failing.call(new Lookup("1")).concatWith(failing.call(new Lookup("2")))
            .collectList()))
        .expectNext(List.of("product unknown", "product unknown"))
        .expectComplete().verify(VERIFY);
    assertThat(calls).hasValue(1);
  }
}
