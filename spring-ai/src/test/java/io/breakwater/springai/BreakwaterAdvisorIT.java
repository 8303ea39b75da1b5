package io.breakwater.springai;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.limit.RateLimit;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.LlmGuard;
import io.breakwater.testing.llm.ScriptedModelServer;
import io.breakwater.testing.llm.ScriptedModelServer.Format;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.ai.chat.client.ChatClient;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The advisor on Spring AI's real OpenAI and Anthropic chat models, through a {@code ChatClient}, against a loopback
 * server replaying streams in each provider's format: each scenario of the module, for each provider.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BreakwaterAdvisorIT {

  /** Short budgets: real HTTP cannot run in virtual time. */
  private static final StreamTimeouts TIMEOUTS = StreamTimeouts.builder()
      .firstItem(Duration.ofMillis(800)).idle(Duration.ofMillis(300)).build();

  private final ScriptedModelServer server = new ScriptedModelServer();
  private final CancellableCalls calls = new CancellableCalls();

  @AfterEach
  void stop() {
    server.close();
  }

  /** The first Spring AI call of each provider in a JVM takes seconds (class loading): one first, untimed. */
  @BeforeAll
  static void warmUp() {
    try (ScriptedModelServer warm = new ScriptedModelServer()) {
      for (Format format : Format.values()) {
        ChatClient.create(SpringAiModels.model(format, warm.baseUrl(format), new CancellableCalls()))
            .prompt("warm up").stream().content().blockLast(Duration.ofSeconds(60));
      }
    }
  }

  private ChatClient chat(Format format, UnaryOperator<LlmGuard.Builder> settings) {
    LlmGuard guard = settings.apply(LlmGuard.builder("local-" + format).timeouts(TIMEOUTS).retry(retry(1))).build();
    BreakwaterAdvisor advisor = BreakwaterAdvisor.builder(guard).cancellableCalls(calls).build();
    return ChatClient.builder(SpringAiModels.model(format, server.baseUrl(format), calls))
        .defaultAdvisors(advisor).build();
  }

  private static RetryPolicy retry(int maxRetries) {
    return RetryPolicy.builder().name("springai-it").maxRetries(maxRetries)
        .backoff(Backoff.fullJitter(Duration.ofMillis(10), Duration.ofMillis(20))).build();
  }

  private static Flux<String> tokens(ChatClient chat) {
    return chat.prompt("hi").stream().content().filter(text -> !text.isEmpty());
  }

  @ParameterizedTest
  @EnumSource(Format.class)
  void aStallAfterTheFirstTokensEndsAtTheIdleBudgetWithThePartialAnswer(Format format) {
    server.then(ScriptedModelServer.stallAfter("Hel", "lo"));
    List<String> partial = new CopyOnWriteArrayList<>();
    long[] lastTokenAt = new long[1];
    Throwable error = tokens(chat(format, b -> b))
        .doOnNext(t -> {
          partial.add(t);
          lastTokenAt[0] = System.nanoTime();
        })
        .then(Mono.<Throwable>empty()).onErrorResume(Mono::just).block(Duration.ofSeconds(30));
    long endedAt = System.nanoTime();

    assertThat(partial).containsExactly("Hel", "lo");
    assertThat(error).isInstanceOf(IdleTimeoutException.class);
    // idle 300 ms from the last content (the heartbeats every 50 ms do not count), timed by the operator when the
    // token passed it, a little before this subscriber saw it; plus slack on a busy machine
    assertThat(Duration.ofNanos(endedAt - lastTokenAt[0])).isBetween(Duration.ofMillis(250), Duration.ofMillis(1500));
    assertThat(server.requests()).as("not retried after content").isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(Format.class)
  void aSlowFirstTokenIsRetriedOnceAndTheRetrySucceeds(Format format) {
    server.then(ScriptedModelServer.firstTokenAfter(Duration.ofSeconds(5), "late"),
        ScriptedModelServer.tokens("Hel", "lo"));

    List<String> answer = tokens(chat(format, b -> b)).collectList().block(Duration.ofSeconds(30));

    assertThat(answer).containsExactly("Hel", "lo");
    assertThat(server.requests()).isEqualTo(2);
    assertThat(server.closedNanos()).as("the slow attempt's connection was closed").isNotEmpty();
    assertThat(server.headers()).as("the call header never leaves the client")
        .allSatisfy(h -> assertThat(h.contains(CancellableCalls.CALL_HEADER)).isFalse());
  }

  @ParameterizedTest
  @EnumSource(Format.class)
  void aRateLimitWithRetryAfterIsHonoured(Format format) {
    server.then(ScriptedModelServer.status(429, Map.of("Retry-After", "1")), ScriptedModelServer.tokens("ok"));

    List<String> answer = tokens(chat(format, b -> b)).collectList().block(Duration.ofSeconds(30));

    assertThat(answer).containsExactly("ok");
    assertThat(server.requests()).isEqualTo(2);
    long gap = server.requestNanos().get(1) - server.requestNanos().get(0);
    // Retry-After: 1 (a rate limit without one waits at least 5 s)
    assertThat(Duration.ofNanos(gap)).as("the retry waited for Retry-After")
        .isBetween(Duration.ofMillis(950), Duration.ofSeconds(3));
  }

  @ParameterizedTest
  @EnumSource(Format.class)
  void theBreakerOpensAfterABurstOf5xxAndTheAdvisorAnswersWithoutARequest(Format format) {
    server.otherwise(ScriptedModelServer.status(503, Map.of()));
    CircuitBreaker breaker = CircuitBreaker.builder("springai-it-" + format).minimumCalls(5)
        .failureRateThreshold(0.5).openDuration(Duration.ofMinutes(1)).build();
    ChatClient chat = chat(format, b -> b.breaker(breaker).retry(retry(0)));

    List<Throwable> errors = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      errors.add(tokens(chat).then(Mono.<Throwable>empty()).onErrorResume(Mono::just).block(Duration.ofSeconds(30)));
    }

    assertThat(errors.subList(0, 5)).allSatisfy(e -> assertThat(e).isInstanceOf(RetryExhaustedException.class)
        .cause().isInstanceOf(HttpStatusException.class)
        .satisfies(s -> assertThat(((HttpStatusException) s).status()).isEqualTo(503)));
    assertThat(errors.get(5)).isInstanceOf(CircuitBreakerOpenException.class);
    assertThat(server.requests()).as("the sixth call sent no request").isEqualTo(5);
  }

  @ParameterizedTest
  @EnumSource(Format.class)
  void cancellingTheSubscriberClosesTheConnectionWithinOneSecond(Format format) throws InterruptedException {
    int streams = 20;
    server.otherwise(ScriptedModelServer.stallAfter("Hel", "lo"));
    ChatClient chat = chat(format, b -> b.timeouts(StreamTimeouts.builder().firstItem(Duration.ofSeconds(10))
        .idle(Duration.ofSeconds(10)).build()));

    List<Mono<List<String>>> subscribers = new ArrayList<>();
    for (int i = 0; i < streams; i++) {
      subscribers.add(tokens(chat).take(1).collectList());   // the first token, then the subscriber cancels
    }
    List<List<String>> answers = Flux.merge(subscribers).collectList().block(Duration.ofSeconds(30));
    long cancelledAt = System.nanoTime();

    assertThat(answers).hasSize(streams).allSatisfy(a -> assertThat(a).containsExactly("Hel"));
    long bound = cancelledAt + Duration.ofSeconds(1).toNanos();
    while (server.closedNanos().size() < streams && System.nanoTime() < bound) {
      Thread.sleep(10);
    }
    assertThat(server.requests()).isEqualTo(streams);
    assertThat(server.closedNanos()).as("connections closed within 1 s of the cancellations").hasSize(streams)
        .allSatisfy(at -> assertThat(at).isLessThanOrEqualTo(bound));
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void theRateLimitsAnAnthropicResponseReportsLowerTheGuardsRateLimit(boolean stream) {
    server.then((format, streamed, res, loop) -> ScriptedModelServer.tokens("ok").send(format, streamed,
        res.header("anthropic-ratelimit-requests-limit", "50").header("anthropic-ratelimit-requests-remaining", "3"),
        loop));
    RateLimit limit = RateLimit.builder("springai-it-anthropic").requests(1000, Duration.ofMinutes(1)).build();
    ChatClient chat = chat(Format.ANTHROPIC, b -> b.rateLimit(limit));

    String answer = stream ? String.join("", tokens(chat).collectList().block(Duration.ofSeconds(30)))
        : chat.prompt("hi").call().content();

    assertThat(answer).isEqualTo("ok");
    // the provider's 3 remaining, refilled since at the provider's 50 a minute; without the metadata, 999
    assertThat(limit.availableRequests()).as("what the provider reported, not the configured 1000")
        .isLessThanOrEqualTo(50);
  }

  @ParameterizedTest
  @EnumSource(Format.class)
  void aBlockingCallIsRetriedAfterA5xx(Format format) {
    server.then(ScriptedModelServer.status(503, Map.of()), ScriptedModelServer.tokens("Hel", "lo"));

    String answer = chat(format, b -> b).prompt("hi").call().content();

    assertThat(answer).isEqualTo("Hello");
    assertThat(server.requests()).isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(Format.class)
  void aBlockingCallThatOutlivesItsTimeoutIsCutAndItsConnectionClosed(Format format) throws InterruptedException {
    server.otherwise(ScriptedModelServer.firstTokenAfter(Duration.ofSeconds(20), "late"));
    ChatClient chat = chat(format, b -> b.callTimeout(Duration.ofMillis(400)).retry(retry(0)));

    Throwable error = null;
    try {
      chat.prompt("hi").call().content();
    } catch (RuntimeException e) {
      error = Exceptions.unwrap(e);
    }
    long failedAt = System.nanoTime();

    assertThat(error).isInstanceOf(RetryExhaustedException.class).cause().isInstanceOf(CallTimeoutException.class);
    long bound = failedAt + Duration.ofSeconds(1).toNanos();
    while (server.closedNanos().isEmpty() && System.nanoTime() < bound) {
      Thread.sleep(10);
    }
    assertThat(server.closedNanos()).hasSize(1);
  }
}
