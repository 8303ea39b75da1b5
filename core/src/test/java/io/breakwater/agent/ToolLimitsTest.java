package io.breakwater.agent;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.limit.CallWeight;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** A tool's concurrency and rate limits, and the token figures it shares with the task budget. */
class ToolLimitsTest {

  static final Duration VERIFY = Duration.ofSeconds(10);

  final Fixtures fx = new Fixtures();

  record Reply(String text, long totalTokens) {}

  @Test
  void aToolNeverHasMoreAttemptsInFlightThanItsConcurrencyLimit() {
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> {
          Tool<Integer, Integer> slow = Tool.of(fx.descriptor("search.slow")
                  .concurrencyLimit(ConcurrencyLimit.builder("search").fixed(3).build()).build(),
              (Integer i) -> Mono.defer(() -> {
                most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                return Mono.delay(Duration.ofSeconds(1)).thenReturn(i).doOnTerminate(inFlight::decrementAndGet);
              }), Integer.class);
          return Flux.range(0, 12).flatMap(slow::call).count();
        })
        .thenAwait(Duration.ofSeconds(4))
        .expectNext(12L)
        .expectComplete()
        .verify(VERIFY);
    // 12 calls of 1 s, 3 at a time, each within its 2 s per-attempt timeout: waiting for a permit is not the call's time
    assertThat(most).hasValue(3);
  }

  @Test
  void theTaskSpendsTheTokensTheRateLimitCounted() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    RateLimit model = RateLimit.builder("model").tokens(10_000, Duration.ofMinutes(1)).scheduler(() -> clock).build();
    StepVerifier.withVirtualTime(() -> {
          Tool<String, Reply> ask = Tool.of(fx.descriptor("model.ask")
                  .rateLimit(model, CallWeight.tokens(800, Reply::totalTokens)).build(),
              (String q) -> Mono.just(new Reply("Paris", 300)), Reply.class);
          return ask.call("Capital of France?")
              .then(Mono.deferContextual(ctx -> Mono.just(TaskBudget.remaining(ctx).tokens())))
              .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(1)).tokens(1_000).build()));
        }, () -> clock, Long.MAX_VALUE)
        .expectNext(700L)
        .expectComplete()
        .verify(VERIFY);
    // 800 taken before the call, 500 given back when it ended: the same 300 the task spent
    assertThat(model.availableTokens()).isEqualTo(9_700);
  }

  @Test
  void aTaskOverItsTokenBudgetFailsWithTheUsageTheLimitCounted() {
    StepVerifier.withVirtualTime(() -> {
          Tool<String, Reply> ask = Tool.of(fx.descriptor("model.ask")
                  .rateLimit(RateLimit.builder("model").tokens(10_000, Duration.ofMinutes(1)).build(),
                      CallWeight.tokens(800, Reply::totalTokens)).build(),
              (String q) -> Mono.just(new Reply("a long answer", 1_200)), Reply.class);
          return ask.call("Tell me everything")
              .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(1)).tokens(1_000).build()));
        })
        .expectError(TokenBudgetExhaustedException.class)
        .verify(VERIFY);
  }

  @Test
  void aRefusalByTheToolsOwnLimitDoesNotWriteTheToolOff() {
    AtomicInteger calls = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> {
          Tool<String, String> once = Tool.of(fx.descriptor("pay.quote")
                  .unavailableAfter(io.breakwater.failure.FailureKind.LIMIT_EXCEEDED, 1)
                  .rateLimit(RateLimit.builder("quotes").requests(1, Duration.ofMinutes(1)).maxWait(Duration.ZERO)
                      .build()).build(),
              (String q) -> Mono.fromCallable(() -> "quote #" + calls.incrementAndGet()), String.class);
          return once.call("a")
              .then(once.outcome("b"))
              .doOnNext(outcome -> assertThat(outcome).isInstanceOf(ToolOutcome.Failure.class))
              .map(outcome -> ((ToolOutcome.Failure<String>) outcome).error())
              // the refusal is LIMIT_EXCEEDED; with unavailableAfter(LIMIT_EXCEEDED, 1) it would write the tool off
              .doOnNext(error -> assertThat(error).isInstanceOf(LimitExceededException.class))
              .then(Mono.delay(Duration.ofSeconds(61)).then(once.call("c")))
              .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(5)).build()));
        })
        .thenAwait(Duration.ofSeconds(61))
        .expectNext("quote #2")
        .expectComplete()
        .verify(VERIFY);
    assertThat(calls).hasValue(2);
  }
}
