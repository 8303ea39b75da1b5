package io.breakwater.issues;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.agent.ToolRateLimitedException;
import io.breakwater.agent.ToolUnavailableException;
import io.breakwater.deadline.Deadline;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * Incident 2: a rate-limited tool was called 23 times in 3 minutes. The framework's 10 s timeout sat over an HTTP
 * client timeout of 60 s, so abandoned requests kept their connections (zombies filling the pool), and retries came
 * 5 times at a fixed 500 ms. With Breakwater the timeout cancels the request, the client sees the call's deadline,
 * rate-limited retries honour Retry-After, and the tool is written off for the task after two rate-limited calls.
 */
class RateLimitedToolHammeredIncidentTest {

  static final Duration VERIFY = Duration.ofSeconds(5);
  static final int POOL = 4;

  /** A tiny HTTP client: a connection pool, a 60 s client timeout unless the Context carries a tighter deadline. */
  final AtomicInteger inUse = new AtomicInteger();
  final AtomicInteger poolExhausted = new AtomicInteger();
  final List<Long> requestsAtMillis = new CopyOnWriteArrayList<>();
  final List<Duration> clientTimeouts = new CopyOnWriteArrayList<>();

  Mono<String> crmSearch(String query) {
    return Mono.deferContextual(ctx -> {
      if (inUse.get() >= POOL) {
        poolExhausted.incrementAndGet();
        return Mono.error(new IllegalStateException("connection pool exhausted"));
      }
      int n = requestsAtMillis.size();
      requestsAtMillis.add(Schedulers.parallel().now(TimeUnit.MILLISECONDS));
      Duration clientTimeout = Deadline.from(ctx).map(Deadline::remaining).orElse(Duration.ofSeconds(60));
      clientTimeouts.add(clientTimeout);
      inUse.incrementAndGet();
      // the first request hangs; after that the service answers 429 with Retry-After: 20
      Mono<String> response = n == 0 ? Mono.never()
          : Mono.error(new HttpStatusException(429, Map.of("Retry-After", List.of("20"))));
      return response.timeout(clientTimeout).doFinally(signal -> inUse.decrementAndGet());
    });
  }

  @Test
  void withoutBreakwaterTheLoopHammersTheToolAndLeaksConnections() {
    // the framework's 10 s timeout does not cancel the client's request (it was a future); retries 5 × 500 ms
    StepVerifier.withVirtualTime(() -> Flux.range(0, 200)
            .concatMap(i -> Mono.<String>create(sink -> crmSearch("acme").subscribe(sink::success, sink::error))
                .timeout(Duration.ofSeconds(10))
                .retryWhen(reactor.util.retry.Retry.fixedDelay(5, Duration.ofMillis(500)))
                .onErrorResume(e -> Mono.just("failed")), 1)
            .take(Duration.ofMinutes(3))
            .then())
        .thenAwait(Duration.ofMinutes(3))
        .expectComplete()
        .verify(VERIFY);
    assertThat(requestsAtMillis.size()).isGreaterThan(23);
    assertThat(clientTimeouts).first().isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void breakwaterCallsTheToolAFewTimesHonoursRetryAfterAndLeaksNothing() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    List<String> events = new CopyOnWriteArrayList<>();
    SplittableRandom seed = new SplittableRandom(8);
    Tool<String, String> crm = Tool.of(ToolDescriptor.builder("crm.search").sideEffect(SideEffect.READ_ONLY)
            .timeouts(CallTimeouts.fixed(Duration.ofSeconds(10)))
            .retry(RetryPolicy.builder().name("crm").budget(RetryBudget.unlimited())
                .random(() -> new java.util.Random(seed.nextLong())).build())
            .meterRegistry(meters).eventLog(events::add)
            .build(),
        this::crmSearch, String.class);
    List<ToolOutcome<String>> outcomes = new CopyOnWriteArrayList<>();

    // the agent loop asks again 5 s after each answer, for 3 minutes
    StepVerifier.withVirtualTime(() -> Flux.range(0, 1_000)
            .concatMap(i -> Mono.delay(Duration.ofSeconds(5)).then(crm.outcome("acme")), 1)
            .take(Duration.ofMinutes(3))
            .doOnNext(outcomes::add)
            .then()
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(4)).retries(5).build())))
        .thenAwait(Duration.ofMinutes(3))
        .expectComplete()
        .verify(VERIFY);

    // 1 + 5 retries + 1 call reach the service, not 23
    assertThat(requestsAtMillis).hasSize(7);
    // no zombie: the hung request was cancelled at the call's timeout and gave its connection back
    assertThat(inUse).hasValue(0);
    assertThat(poolExhausted).hasValue(0);
    // the client saw the call's own deadline (10 s), never its 60 s default
    assertThat(clientTimeouts).allSatisfy(t -> assertThat(t).isLessThanOrEqualTo(Duration.ofSeconds(10)));
    // after every 429 the next request waited for Retry-After (20 s), within a call and across calls; never 500 ms
    for (int i = 2; i < requestsAtMillis.size(); i++) {
      assertThat(requestsAtMillis.get(i) - requestsAtMillis.get(i - 1)).as("gap before request %d", i)
          .isGreaterThanOrEqualTo(20_000L);
    }
    // the calls in between were refused at once, telling the model how long to wait; then the tool was written off
    assertThat(outcomes).anySatisfy(o -> assertThat(o).isInstanceOfSatisfying(ToolOutcome.Failure.class,
        f -> assertThat(f.error()).isInstanceOf(ToolRateLimitedException.class)));
    assertThat(outcomes.get(outcomes.size() - 1)).isInstanceOfSatisfying(ToolOutcome.Failure.class,
        f -> assertThat(f.error()).isInstanceOf(ToolUnavailableException.class));
    assertThat(outcomes.get(outcomes.size() - 1).forModel()).contains("avoid: calling crm.search again in this task");
    assertThat(events.stream().filter(e -> e.contains("\"attempts\":0"))).hasSize(outcomes.size() - 2);
  }
}
