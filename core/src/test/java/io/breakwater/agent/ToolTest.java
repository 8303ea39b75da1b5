package io.breakwater.agent;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class ToolTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  final Fixtures fx = new Fixtures();

  record Query(String city, String apiKey) {}

  @Test
  void successIsTimedAndEventedWithFingerprintNotArguments() {
    Tool<Query, String> tool = Tool.of(fx.descriptor("weather.get").logArgs("city", "apiKey").build(),
        q -> Mono.just("sunny in " + q.city()), String.class);
    StepVerifier.withVirtualTime(() -> tool.call(new Query("Lyon", "sk-123")))
        .expectNext("sunny in Lyon").expectComplete().verify(VERIFY);
    assertThat(fx.timer("weather.get", "success")).isEqualTo(1);
    assertThat(fx.events).hasSize(1);
    String event = fx.events.get(0);
    assertThat(event).contains("\"tool\":\"weather.get\"", "\"outcome\":\"success\"", "\"attempts\":1",
        "\"side_effect\":\"read_only\"", "\"args\":{\"city\":\"Lyon\",\"apiKey\":\"[redacted]\"}",
        "\"args_fingerprint\":\"").doesNotContain("sk-123");
  }

  @Test
  void fingerprintIgnoresSecretsButNotOtherFields() {
    var redactor = new io.breakwater.internal.agent.Redactor(List.of());
    assertThat(redactor.fingerprint(new Query("Lyon", "a"))).isEqualTo(redactor.fingerprint(new Query("Lyon", "b")))
        .isNotEqualTo(redactor.fingerprint(new Query("Paris", "a"))).hasSize(16);
  }

  @Test
  void adaptiveTimeoutLearnsTheP99PlusBufferAfterWarmUp() {
    Tool<Integer, String> tool = Tool.of(fx.descriptor("search.web")
            .timeouts(CallTimeouts.adaptive().warmUp(10, Duration.ZERO)
                .bounds(Duration.ofMillis(100), Duration.ofSeconds(8)).buffer(Duration.ofMillis(250)).build())
            .build(),
        ms -> Mono.just("ok").delayElement(Duration.ofMillis(ms)), String.class);
    assertThat(tool.currentTimeout()).as("the upper bound until warm").isEqualTo(Duration.ofSeconds(8));
    StepVerifier.withVirtualTime(() -> reactor.core.publisher.Flux.range(0, 10).concatMap(i -> tool.call(200)))
        .thenAwait(Duration.ofSeconds(3)).expectNextCount(10).expectComplete().verify(VERIFY);
    // p99 of ten 200 ms calls (HdrHistogram, 3 digits) + 250 ms
    assertThat(tool.currentTimeout()).isBetween(Duration.ofMillis(449), Duration.ofMillis(451));
    // a stall now ends after the learnt timeout, per attempt (3 attempts, 100 ms apart)
    StepVerifier.withVirtualTime(() -> tool.call(28_000))
        .expectSubscription().expectNoEvent(Duration.ofMillis(1500)).thenAwait(Duration.ofMillis(100))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(io.breakwater.retry.RetryExhaustedException.class)
            .hasMessageContaining("after 3 attempts").hasMessageContaining("Call 'search.web' timed out after running "
                + "450.063ms (its per-call time limit: 450.063ms)"))
        .verify(VERIFY);
    assertThat(fx.meters.counter("breakwater.tool.timeouts", "tool", "search.web", "type", "per_call").count())
        .isEqualTo(3);
  }

  @Test
  void meanPlusThreeSigmaIsAnOption() {
    Tool<Integer, String> tool = Tool.of(fx.descriptor("search.mean")
            .timeouts(CallTimeouts.adaptive().meanPlusSigmas(3).warmUp(4, Duration.ZERO)
                .bounds(Duration.ofMillis(1), Duration.ofSeconds(8)).buffer(Duration.ZERO).build())
            .build(),
        ms -> Mono.just("ok").delayElement(Duration.ofMillis(ms)), String.class);
    StepVerifier.withVirtualTime(() -> reactor.core.publisher.Flux.just(100, 100, 300, 300).concatMap(tool::call))
        .thenAwait(Duration.ofSeconds(1)).expectNextCount(4).expectComplete().verify(VERIFY);
    // mean 200 ms, σ 100 ms → 500 ms
    assertThat(tool.currentTimeout().toMillis()).isBetween(498L, 502L);
  }

  @Test
  void attemptTimeoutNeverExceedsTheTimeLeftBeforeTheDeadline() {
    List<Duration> seen = new CopyOnWriteArrayList<>();
    Tool<String, String> tool = Tool.of(fx.descriptor("slow.tool").timeouts(CallTimeouts.fixed(Duration.ofSeconds(30)))
            .build(),
        a -> Mono.deferContextual(ctx -> {
          seen.add(io.breakwater.deadline.Deadline.from(ctx).orElseThrow().remaining());
          return Mono.just("x");
        }), String.class);
    StepVerifier.withVirtualTime(() -> tool.call("a")
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(10)).build())))
        .expectNext("x").expectComplete().verify(VERIFY);
    // the deadline's per-call budget: 10 s × 0.6
    assertThat(seen).containsExactly(Duration.ofSeconds(6));
  }

  @Test
  void anAttemptTimeoutNamesTheToolAndItsTimeLimit() {
    Tool<String, String> tool = Tool.of(fx.descriptor("slow.tool").timeouts(CallTimeouts.fixed(Duration.ofSeconds(1)))
            .retry(Fixtures.retry("slow", 0).build()).build(), a -> Mono.never(), String.class);
    StepVerifier.withVirtualTime(() -> tool.call("a"))
        .thenAwait(Duration.ofSeconds(1))
        .expectErrorSatisfies(e -> {
          Throwable t = e;
          while (t != null && !(t instanceof CallTimeoutException)) {
            t = t.getCause();
          }
          assertThat(t).as("a CallTimeoutException in %s", e)
              .hasMessage("Call 'slow.tool' timed out after running 1s (its per-call time limit: 1s)");
        })
        .verify(VERIFY);
  }

  @Test
  void toolIsWrittenOffForTheTaskAfterItsThresholdAndThenFailsFastWithoutACall() {
    AtomicInteger calls = new AtomicInteger();
    Tool<String, String> tool = Tool.of(fx.descriptor("mail.send").retry(Fixtures.retry("mail", 0).build())
            .unavailableAfter(FailureKind.SERVER_ERROR, 2).alternates("mail.queue").build(),
        a -> Mono.defer(() -> {
          calls.incrementAndGet();
          return Mono.error(new HttpStatusException(503));
        }), String.class);
    List<ToolOutcome<String>> outcomes = new CopyOnWriteArrayList<>();
    StepVerifier.withVirtualTime(() -> reactor.core.publisher.Flux.range(0, 4).concatMap(i -> tool.outcome("x"))
            .doOnNext(outcomes::add)
            .then(Mono.deferContextual(ctx -> Mono.just(FailureMemory.from(ctx))))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(30)).build())))
        .assertNext(memory -> assertThat(memory.lines()).containsExactly("mail.send: 2 failures (server_error 2); "
            + "last: server_error (HTTP 503); unavailable for this task"))
        .expectComplete().verify(VERIFY);
    assertThat(calls).hasValue(2);
    ToolOutcome.Failure<String> last = (ToolOutcome.Failure<String>) outcomes.get(3);
    assertThat(last.error()).isInstanceOf(ToolUnavailableException.class);
    assertThat(last.feedback().kind()).isEqualTo(FailureKind.CIRCUIT_OPEN);
    assertThat(last.feedback().render()).contains("next: call mail.queue instead",
        "avoid: calling mail.send again in this task");
  }

  @Test
  void aRateLimitedToolIsLeftAloneForItsRetryAfterWithinTheTask() {
    AtomicInteger calls = new AtomicInteger();
    Tool<String, String> tool = Tool.of(fx.descriptor("crm.search").retry(Fixtures.retry("crm", 0).build())
            .unavailableAfter(FailureKind.RATE_LIMITED, 0).build(),
        (String a) -> Mono.defer(() -> calls.incrementAndGet() == 1
            ? Mono.error(new HttpStatusException(429, Map.of("Retry-After", List.of("30"))))
            : Mono.just("ok")), String.class);
    StepVerifier.withVirtualTime(() -> tool.outcome("a")
            .then(Mono.delay(Duration.ofSeconds(10))).then(tool.outcome("a")).map(ToolOutcome::forModel)
            .concatWith(Mono.delay(Duration.ofSeconds(20)).then(tool.call("a")))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(1)).build())))
        .thenAwait(Duration.ofSeconds(10))
        .assertNext(text -> assertThat(text).contains("kind: rate_limited",
            "avoid: calling crm.search again in the next 20s: it is rate-limited"))
        .thenAwait(Duration.ofSeconds(20))
        .expectNext("ok")
        .expectComplete().verify(VERIFY);
    assertThat(calls).hasValue(2);
  }

  @Test
  void invalidArgumentsAreNotRetriedAndNeverTriggerFallbacks() {
    AtomicInteger calls = new AtomicInteger();
    Tool<String, String> tool = Tool.of(fx.descriptor("flights.search").build(),
        (String a) -> Mono.defer(() -> {
          calls.incrementAndGet();
          return Mono.error(new IllegalArgumentException("date 2026-13-01 is not a date"));
        }), String.class)
        .withFallbacks(Fallbacks.<String, String>builder().orDefault("no flights").build());
    StepVerifier.withVirtualTime(() -> tool.outcome("x"))
        .assertNext(o -> {
          assertThat(o).isInstanceOf(ToolOutcome.Failure.class);
          assertThat(o.forModel()).contains("kind: invalid_argument",
              "next: fix the arguments (date 2026-13-01 is not a date) and call flights.search again",
              "avoid: repeating the same arguments");
        })
        .expectComplete().verify(VERIFY);
    assertThat(calls).hasValue(1);
    assertThatThrownBy(() -> Fallbacks.<String, String>builder().orDefault("x").on(FailureKind.INVALID_ARGUMENT))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("INVALID_ARGUMENT");
  }

  @Test
  void fallbackChainTriesAlternateThenStaleThenDefault() {
    AtomicInteger mode = new AtomicInteger();
    Tool<String, String> tool = Tool.of(fx.descriptor("rates.get").retry(Fixtures.retry("rates", 0).build())
            .unavailableAfter(FailureKind.SERVER_ERROR, 0).build(),
        (String a) -> mode.get() == 0 ? Mono.just("rate " + a) : Mono.error(new HttpStatusException(500)), String.class)
        .withFallbacks(Fallbacks.<String, String>builder()
            .alternate("rates.backup", a -> mode.get() == 1 ? Mono.just("backup " + a)
                : Mono.error(new HttpStatusException(502)))
            .stale(Duration.ofMinutes(5))
            .orDefault(a -> "unknown rate for " + a)
            .build());
    StepVerifier.withVirtualTime(() -> tool.outcome("EUR")
            .concatWith(Mono.fromRunnable(() -> mode.set(1)).then(tool.outcome("EUR")))
            .concatWith(Mono.fromRunnable(() -> mode.set(2)).then(tool.outcome("EUR")))
            .concatWith(tool.outcome("USD"))
            .concatWith(Mono.delay(Duration.ofMinutes(6)).then(tool.outcome("EUR")))
            .map(o -> (ToolOutcome.Success<String>) o)
            .map(s -> s.source() + ":" + s.value()))
        .expectNext("TOOL:rate EUR", "ALTERNATE:backup EUR", "STALE:rate EUR", "DEFAULT:unknown rate for USD")
        .thenAwait(Duration.ofMinutes(6))
        .expectNext("DEFAULT:unknown rate for EUR")
        .expectComplete().verify(VERIFY);
    assertThat(fx.timer("rates.get", "fallback")).isEqualTo(4);
  }

  @Test
  void aPassedDeadlineSkipsAlternateCallsButNotTheDefault() {
    AtomicInteger alternateCalls = new AtomicInteger();
    Tool<String, String> tool = Tool.of(fx.descriptor("quotes.get").build(),
        (String a) -> Mono.<String>never().transformDeferred(io.breakwater.Breakwater.withDeadline(
            Duration.ofSeconds(1))), String.class)
        .withFallbacks(Fallbacks.<String, String>builder()
            .alternate("quotes.backup", a -> Mono.fromCallable(() -> "backup #" + alternateCalls.incrementAndGet()))
            .orDefault("no quote")
            .build());
    StepVerifier.withVirtualTime(() -> tool.outcome("x"))
        .thenAwait(Duration.ofSeconds(1))
        .assertNext(o -> assertThat(o).isEqualTo(new ToolOutcome.Success<>("no quote", ToolOutcome.Source.DEFAULT,
            null)))
        .expectComplete().verify(VERIFY);
    assertThat(alternateCalls).hasValue(0);
  }

  @Test
  void stepBudgetEndsTheTaskWithATypedErrorAndNoFallback() {
    Tool<String, String> tool = Tool.of(fx.descriptor("kb.lookup").build(), (String a) -> Mono.just(a), String.class)
        .withFallbacks(Fallbacks.<String, String>builder().orDefault("d").build());
    StepVerifier.withVirtualTime(() -> tool.call("1").then(tool.call("2")).then(tool.call("3"))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(5)).maxSteps(2).build())))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(StepBudgetExhaustedException.class)
            .hasMessage("Task 'task' used all of its 2 steps: answer with what you have"))
        .verify(VERIFY);
  }

  @Test
  void tokenBudgetIsSpentAndReadBack() {
    StepVerifier.withVirtualTime(() -> TaskBudget.spendTokens(600)
            .then(Mono.deferContextual(ctx -> Mono.just(TaskBudget.remaining(ctx).render())))
            .concatWith(TaskBudget.spendTokens(500).map(RemainingBudget::render))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(10)).retries(3).maxSteps(20)
                .tokens(1_000).build())))
        .expectNext("budget left: 10s, 3 retries, 20 steps, 400 tokens")
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(TokenBudgetExhaustedException.class)
            .satisfies(t -> assertThat(((TokenBudgetExhaustedException) t).spent()).isEqualTo(1_100)))
        .verify(VERIFY);
  }

  @Test
  void nestedTaskBudgetsOnlyTighten() {
    Tool<String, String> tool = Tool.of(fx.descriptor("kb.lookup").build(), a -> Mono.just(a), String.class);
    StepVerifier.withVirtualTime(() -> tool.call("1")
            .then(Mono.deferContextual(ctx -> Mono.just(TaskBudget.remaining(ctx))))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(60)).maxSteps(10).build()))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(5)).maxSteps(1).build())))
        .assertNext(r -> assertThat(r).isEqualTo(new RemainingBudget(Duration.ofSeconds(5), -1, 0, -1)))
        .expectComplete().verify(VERIFY);
  }

  @Test
  void failureFeedbackIsShortStructuredRedactedAndShowsTheBudget() {
    Tool<String, String> tool = Tool.of(fx.descriptor("crm.update").alternates("crm.queueUpdate")
            .retry(Fixtures.retry("crm", 0).build()).build(),
        a -> Mono.error(new java.net.ConnectException("refused for token=abc123, host crm")), String.class);
    StepVerifier.withVirtualTime(() -> tool.outcome("x").map(ToolOutcome::forModel)
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(20)).retries(4).maxSteps(9)
                .build())))
        .assertNext(text -> assertThat(text).isEqualTo("""
            tool_failure: crm.update
            kind: connection
            reason: refused for token=[redacted], host crm
            next: call crm.queueUpdate instead; or continue without this result; or call crm.update once more later \
            if the result is essential
            avoid: calling crm.update again with the same arguments right away
            budget left: 20s, 4 retries, 8 steps"""))
        .expectComplete().verify(VERIFY);
    assertThat(fx.events.get(0)).contains("token=[redacted]").doesNotContain("abc123");
  }

  @Test
  void failureMemoryKeepsOneLinePerToolUpdatedInPlace() {
    AtomicInteger n = new AtomicInteger();
    Tool<String, String> flaky = Tool.of(fx.descriptor("geo.lookup").retry(Fixtures.retry("geo", 0).build()).build(),
        a -> n.getAndIncrement() < 2 ? Mono.error(new HttpStatusException(500)) : Mono.just("ok"), String.class);
    Tool<String, String> broken = Tool.of(fx.descriptor("hotel.search").retry(Fixtures.retry("h", 0).build())
        .build(), a -> Mono.error(new HttpStatusException(404)), String.class);
    StepVerifier.withVirtualTime(() -> flaky.outcome("a").then(flaky.outcome("a")).then(broken.outcome("b"))
            .then(flaky.outcome("a"))
            .then(Mono.deferContextual(ctx -> Mono.just(FailureMemory.from(ctx).render())))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(20)).build())))
        .expectNext("""
            tool failures so far:
            geo.lookup: 2 failures (server_error 2); last call ok
            hotel.search: 1 failure (client_error 1); last: client_error (HTTP 404)""")
        .expectComplete().verify(VERIFY);
  }

  @Test
  void cancellationIsNotAFailureOfTheTool() {
    Tool<String, String> tool = Tool.of(fx.descriptor("slow.tool").build(), a -> Mono.never(), String.class);
    StepVerifier.withVirtualTime(() -> tool.outcome("a")
            .then(Mono.deferContextual(ctx -> Mono.just(FailureMemory.from(ctx))))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(20)).build())))
        .thenAwait(Duration.ofMillis(500)).thenCancel().verify(VERIFY);
    assertThat(fx.timer("slow.tool", "cancelled")).isEqualTo(1);
    assertThat(fx.events.get(0)).contains("\"outcome\":\"cancelled\"", "\"timeout_type\":null");
  }

  /** Issue 26: only hard and per-call timeouts reached the meter, so an alert on idle or first_item never fired. */
  @Test
  void streamTimeoutsOfEachAttemptAreCountedByType() {
    Tool<String, String> firstItem = Tool.of(fx.descriptor("llm.first").build(),
        (String a) -> reactor.core.publisher.Flux.<String>never()
            .transformDeferred(io.breakwater.Breakwater.firstItemTimeout(Duration.ofMillis(300))).next(),
        String.class);
    Tool<String, String> idle = Tool.of(fx.descriptor("llm.idle").build(),
        (String a) -> reactor.core.publisher.Flux.concat(reactor.core.publisher.Flux.just("token"),
                reactor.core.publisher.Flux.<String>never())
            .transformDeferred(io.breakwater.Breakwater.idleTimeout(Duration.ofMillis(300))).last(),
        String.class);
    StepVerifier.withVirtualTime(() -> firstItem.outcome("a").then(idle.outcome("a")))
        .thenAwait(Duration.ofSeconds(5))
        .assertNext(o -> assertThat(o.forModel()).contains("kind: timeout"))
        .expectComplete().verify(VERIFY);
    // three attempts each (2 retries)
    assertThat(fx.meters.counter("breakwater.tool.timeouts", "tool", "llm.first", "type", "first_item").count())
        .isEqualTo(3);
    assertThat(fx.meters.counter("breakwater.tool.timeouts", "tool", "llm.idle", "type", "idle").count())
        .isEqualTo(3);
    assertThat(fx.events).allSatisfy(e -> assertThat(e).containsAnyOf("\"timeout_type\":\"first_item\"",
        "\"timeout_type\":\"idle\""));
  }

  /** Issue 26: without a deadline the per-attempt timeout ran on Schedulers.parallel(), not the descriptor's clock. */
  @Test
  void withoutADeadlineThePerAttemptTimeoutRunsOnTheDescriptorsScheduler() {
    reactor.test.scheduler.VirtualTimeScheduler clock = reactor.test.scheduler.VirtualTimeScheduler.create();
    Tool<String, String> tool = Tool.of(fx.descriptor("slow.tool").scheduler(() -> clock)
            .retry(Fixtures.retry("slow", 0).scheduler(() -> clock).build()).build(),
        (String a) -> Mono.never(), String.class);
    java.util.concurrent.atomic.AtomicReference<ToolOutcome<String>> outcome =
        new java.util.concurrent.atomic.AtomicReference<>();
    tool.outcome("a").subscribe(outcome::set);
    clock.advanceTimeBy(Duration.ofMillis(1_999));
    assertThat(outcome).hasValue(null);
    clock.advanceTimeBy(Duration.ofMillis(1));
    assertThat(outcome.get()).isInstanceOf(ToolOutcome.Failure.class)
        .satisfies(o -> assertThat(o.forModel()).contains("kind: timeout", "no answer within 2s"));
  }

  @Test
  void theTaskDeadlineEndingACallIsAHardTimeout() {
    Tool<String, String> tool = Tool.of(fx.descriptor("slow.tool").build(), (String a) -> Mono.never(),
        String.class);
    StepVerifier.withVirtualTime(() -> tool.call("a").transformDeferred(withTaskBudget(TaskBudget.builder(
            io.breakwater.deadline.DeadlineSpec.builder(Duration.ofSeconds(1)).perCallFraction(1.0).build()).build())))
        .thenAwait(Duration.ofSeconds(1))
        .expectError(io.breakwater.deadline.DeadlineExceededException.class)
        .verify(VERIFY);
    assertThat(fx.meters.counter("breakwater.tool.timeouts", "tool", "slow.tool", "type", "hard").count())
        .isEqualTo(1);
    assertThat(fx.events.get(0)).contains("\"outcome\":\"cancelled\"", "\"timeout_type\":\"hard\"");
  }

  @Test
  void anObservationIsMadePerCall() {
    List<String> seen = new CopyOnWriteArrayList<>();
    ObservationRegistry registry = ObservationRegistry.create();
    registry.observationConfig().observationHandler(new ObservationHandler<>() {
      @Override
      public void onStop(Observation.Context context) {
        seen.add(context.getName() + " " + context.getLowCardinalityKeyValue("tool").getValue() + " "
            + context.getLowCardinalityKeyValue("result").getValue());
      }

      @Override
      public boolean supportsContext(Observation.Context context) {
        return true;
      }
    });
    Tool<String, String> tool = Tool.of(fx.descriptor("kb.lookup").observationRegistry(registry).build(),
        Mono::just, String.class);
    StepVerifier.withVirtualTime(() -> tool.call("a")).expectNext("a").expectComplete().verify(VERIFY);
    assertThat(seen).containsExactly("breakwater.tool.call kb.lookup success");
  }

  @Test
  void anObservationOfAFailedCallIsGivenTheRedactedReasonNotTheToolsOwnError() {
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    ObservationRegistry registry = ObservationRegistry.create();
    registry.observationConfig().observationHandler(new ObservationHandler<>() {
      @Override
      public void onError(Observation.Context context) {
        errors.add(context.getError());
      }

      @Override
      public boolean supportsContext(Observation.Context context) {
        return true;
      }
    });
    Tool<Map<String, String>, String> tool = Tool.of(fx.descriptor("kb.lookup").observationRegistry(registry).build(),
        args -> Mono.error(new HttpStatusException(403, Map.of(), "refused apiKey=sk-live-7731 (sk-live-7731 revoked)")),
        String.class);

    List<Throwable> seenByCaller = new CopyOnWriteArrayList<>();
    StepVerifier.withVirtualTime(() -> tool.call(Map.of("apiKey", "sk-live-7731", "city", "Lyon")))
        .consumeErrorWith(seenByCaller::add).verify(VERIFY);

    assertThat(errors).singleElement().satisfies(error -> {
      assertThat(error.getMessage()).startsWith(seenByCaller.get(0).getClass().getName())
          .contains("[redacted]").doesNotContain("sk-live-7731");
      assertThat(error.getCause()).isNull();
      assertThat(error.getStackTrace()).isEmpty();
    });
  }

  @Test
  void descriptorsSayWhatToChange() {
    assertThatThrownBy(() -> ToolDescriptor.builder("x.y").build()).hasMessageContaining(".sideEffect(");
    assertThatThrownBy(() -> ToolDescriptor.builder("pay.refund").sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
        .build()).hasMessageContaining(".idempotency(");
    assertThatThrownBy(() -> CallTimeouts.adaptive().bounds(Duration.ofSeconds(2), Duration.ofSeconds(1)).build())
        .hasMessageContaining("0 < min <= max");
    assertThatThrownBy(() -> TaskBudget.builder(Duration.ofSeconds(1)).maxSteps(0).build())
        .hasMessageContaining("maxSteps is 0");
    assertThat(ToolDescriptor.builder("gmail.send").sideEffect(SideEffect.IDEMPOTENT_WRITE).build().family())
        .isEqualTo("gmail");
  }
}
