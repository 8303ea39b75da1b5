package io.breakwater.security;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.idleTimeout;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.sideEffect;
import static io.breakwater.Breakwater.withDeadline;
import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.BreakwaterException;
import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.FailureMemory;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.CachedFailureException;
import io.breakwater.idempotency.IdempotencyInFlightException;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyKeyException;
import io.breakwater.idempotency.IdempotencyKeyMismatchException;
import io.breakwater.idempotency.IdempotencyLimitException;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.idempotency.StoreUnavailableException;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmResponse;
import io.breakwater.stream.llm.LlmStreamClient;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.test.StepVerifier;

/**
 * Drives every operator (retry, breaker, idempotency, deadline, per-call and idle timeouts) and the agent's
 * {@code Tool} pipeline with arguments, error messages and results that carry two recognisable secrets (one in a
 * field named {@code apiKey}, redacted by default; one in {@code accountRef}, redacted because the tool's descriptor
 * says so), through success, failure, retry exhaustion, open breaker,
 * mismatch, size limit, in-flight, timeouts and store failures, and asserts that neither secret appears in:
 * <ul>
 *   <li>the message or {@code toString()} of any exception Breakwater makes (the tool's own errors may carry them:
 *       they must come back as the very objects the tool threw, never copied into another text);</li>
 *   <li>any log line (SLF4J, which Reactor's loggers also use, writes to {@code System.err} through slf4j-simple in
 *       tests; the test captures that stream);</li>
 *   <li>any meter name or tag;</li>
 *   <li>tool call events, failure feedback, outcomes and the task's failure memory.</li>
 * </ul>
 * Results are the caller's own and are returned as they are; they must not leak anywhere else. A failure kept by the
 * idempotency policy is replayed to later callers of the same key with the tool's own message, by design (see
 * {@code docs/reliability.md}), as a kept result is.
 */
class SecretsNeverLeakTest {

  static final String API_KEY = "sk-live-4f9c2a7e1b";
  static final String ACCOUNT = "acct-77Q3-private";
  static final byte[] KEY_SECRET = "a 32-byte secret for these tests!".getBytes(StandardCharsets.US_ASCII);
  static final Duration VERIFY = Duration.ofSeconds(5);

  record Request(String query, String apiKey, String accountRef) {}

  final Request request = new Request("flights to Lyon", API_KEY, ACCOUNT);
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final List<String> events = new CopyOnWriteArrayList<>();
  /** What Breakwater wrote for the caller: exception messages and toString()s, feedback, outcomes, memory. */
  final List<String> seen = new CopyOnWriteArrayList<>();
  /** The errors the tool itself threw: the only throwables allowed to hold a secret. */
  final Set<Throwable> toolErrors = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

  private final ByteArrayOutputStream logs = new ByteArrayOutputStream();
  private PrintStream originalErr;

  @BeforeEach
  void captureLogs() {
    originalErr = System.err;
    System.setErr(new PrintStream(new Tee(originalErr, logs), true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void restoreLogs() {
    System.setErr(originalErr);
  }

  @Test
  void retryExhaustionNamesTheErrorsClassesNotTheirMessages() {
    RetryPolicy policy = retry("search", 2).build();
    StepVerifier.withVirtualTime(() -> Mono.error(() -> toolError(new HttpStatusException(503, Map.of(), leaky())))
            .transformDeferred(retryWithBudget(policy)))
        .thenAwait(Duration.ofSeconds(1))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(RetryExhaustedException.class).hasMessageContaining("after 3 attempts")
              .hasMessageContaining(HttpStatusException.class.getName());
          see(e);
        })
        .verify(VERIFY);
    // a failure that is not retried comes back as the tool's own error, untouched
    IllegalArgumentException invalid = toolError(new IllegalArgumentException(leaky()));
    StepVerifier.create(Mono.error(invalid).transformDeferred(retryWithBudget(policy)))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(invalid)).verify(VERIFY);
    assertNothingLeaked();
  }

  @Test
  void openBreakerRejectsWithoutRepeatingTheFailures() {
    CircuitBreaker breaker = CircuitBreaker.builder("payments").minimumCalls(2).meterRegistry(meters).build();
    Mono<String> failing = Mono.error(() -> toolError(new HttpStatusException(500, Map.of(), leaky())));
    for (int i = 0; i < 2; i++) {
      StepVerifier.create(failing.transformDeferred(guardedBy(breaker)))
          .expectErrorSatisfies(e -> assertThat(toolErrors).contains(e)).verify(VERIFY);
    }
    StepVerifier.create(failing.transformDeferred(guardedBy(breaker)))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(CircuitBreakerOpenException.class);
          see(e);
        })
        .verify(VERIFY);
    seen.add(breaker.toString());
    assertNothingLeaked();
  }

  @Test
  void idempotencyErrorsAndLogsNameTheKeyNeverTheArgumentsOrTheResult() {
    IdempotencyStore store = IdempotencyStore.inMemory();
    IdempotencyKey derived = IdempotencyKey.builder("flights.book").namespace("acme").args(request).build();
    IdempotencyKey explicit = IdempotencyKey.explicit("acme", "flights.book", "order-42", request);
    seen.addAll(List.of(derived.toString(), derived.value(), explicit.toString(), explicit.fingerprint()));
    IdempotencyPolicy policy = IdempotencyPolicy.builder(store).maxResultBytes(64).failFastWhenInFlight()
        .meterRegistry(meters).build();

    // success: the result comes back, and is replayed, to the caller only
    String result = "booked for " + API_KEY;
    for (int i = 0; i < 2; i++) {
      StepVerifier.create(Mono.just(result).transformDeferred(idempotentBy(derived, policy, String.class)))
          .expectNext(result).verifyComplete();
    }
    // mismatch: the same explicit key with another payload
    StepVerifier.create(Mono.just("x").transformDeferred(idempotentBy(explicit, policy, String.class)))
        .expectNext("x").verifyComplete();
    IdempotencyKey changed = IdempotencyKey.explicit("acme", "flights.book", "order-42",
        new Request("flights to Nice", API_KEY, ACCOUNT));
    expectBreakwaterError(Mono.just("y").transformDeferred(idempotentBy(changed, policy, String.class)),
        IdempotencyKeyMismatchException.class);
    // size limit: a result over maxResultBytes, for the caller and for a duplicate
    IdempotencyKey big = IdempotencyKey.explicit("acme", "reports.get", "r-1", request);
    String large = "x".repeat(100) + API_KEY + ACCOUNT;
    expectBreakwaterError(Mono.just(large).transformDeferred(idempotentBy(big, policy, String.class)),
        IdempotencyLimitException.class);
    expectBreakwaterError(Mono.just(large).transformDeferred(idempotentBy(big, policy, String.class)),
        CachedFailureException.class);
    // in flight: a duplicate while the first call runs
    IdempotencyKey slow = IdempotencyKey.builder("flights.book").namespace("acme").args(Map.of("slow", request))
        .build();
    var first = Mono.never().transformDeferred(idempotentBy(slow, policy, Object.class)).subscribe();
    expectBreakwaterError(Mono.just("z").transformDeferred(idempotentBy(slow, policy, String.class)),
        IdempotencyInFlightException.class);
    first.dispose();
    // a quantised time field holding something else: the key cannot be made
    assertThatThrownBy(() -> IdempotencyKey.builder("flights.book").args(Map.of("when", API_KEY))
        .quantise("when", Duration.ofMinutes(5)).build())
        .isInstanceOf(IdempotencyKeyException.class)
        .satisfies(this::see);

    // a store whose errors quote its commands' arguments, as Redisson's timeouts do
    IdempotencyStore echoing = new EchoingStore(store);
    // (a short lease: a completion that fails is retried in the background until the lease ends)
    IdempotencyPolicy echoingPolicy = IdempotencyPolicy.builder(echoing).keySecret(KEY_SECRET).failOpenForReads(true)
        .lease(Duration.ofMillis(300)).meterRegistry(meters).build();
    IdempotencyKey fresh = IdempotencyKey.builder("flights.book").namespace("globex").args(request).build();
    StepVerifier.create(Mono.just(result).transformDeferred(idempotentBy(fresh, echoingPolicy, String.class)))
        .expectNext(result).verifyComplete();
    IdempotencyStore down = new DownStore();
    expectBreakwaterError(Mono.just(result)
        .transformDeferred(idempotentBy(fresh, IdempotencyPolicy.builder(down).keySecret(KEY_SECRET)
            .meterRegistry(meters).build(), String.class)), StoreUnavailableException.class);
    StepVerifier.create(Mono.just(result)
            .transformDeferred(idempotentBy(fresh, IdempotencyPolicy.builder(down).keySecret(KEY_SECRET)
                .failOpenForReads(true).meterRegistry(meters).build(), String.class))
            .transformDeferred(sideEffect(SideEffect.READ_ONLY)))
        .expectNext(result).verifyComplete();
    seen.add(policy.toString());

    for (int i = 0; i < 100 && !logs().contains("the outcome could not be stored"); i++) {
      LockSupport.parkNanos(50_000_000L);
    }
    assertThat(logs()).as("the captured log holds the store warnings")
        .contains("the outcome could not be stored", "without a claim");
    assertNothingLeaked();
  }

  @Test
  void timeoutsNameTheirBudgetsOnly() {
    // no user data reaches these operators; the test pins that their errors stay built from names and durations
    expectTimeout(() -> Mono.never().transformDeferred(withDeadline(Duration.ofSeconds(1))),
        DeadlineExceededException.class);
    expectTimeout(() -> Mono.never().transformDeferred(perCallTimeout(Duration.ofSeconds(1))),
        CallTimeoutException.class);
    expectTimeout(() -> Flux.never().transformDeferred(idleTimeout(Duration.ofSeconds(1))).next(),
        IdleTimeoutException.class);
    assertNothingLeaked();
  }

  @Test
  void toolFeedbackEventsMemoryAndOutcomesAreRedacted() {
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).minimumCalls(4).meterRegistry(meters).build()).build();
    IdempotencyPolicy idempotency = IdempotencyPolicy.builder(IdempotencyStore.inMemory())
        .cacheNonRetryableFailures(true).meterRegistry(meters).build();
    java.util.function.Function<String, ToolDescriptor> descriptor = name -> ToolDescriptor.builder(name)
        .sideEffect(SideEffect.READ_ONLY)
        .timeouts(CallTimeouts.fixed(Duration.ofSeconds(2)))
        .retry(retry(name, 1).build())
        .breakers(breakers)
        .idempotency(idempotency)
        .singleTenant()
        .redact("accountRef")
        .logArgs("query", "apiKey", "accountRef")
        .meterRegistry(meters)
        .eventLog(events::add)
        .build();
    Map<String, Supplier<Throwable>> failures = Map.of(
        "server", () -> new HttpStatusException(503, Map.of(), leaky()),
        "invalid", () -> new IllegalArgumentException(leaky()),
        "client", () -> new HttpStatusException(403, Map.of(), leaky()),
        "unknown", () -> new IllegalStateException(leaky()));
    List<ToolOutcome<String>> outcomes = new CopyOnWriteArrayList<>();
    for (Map.Entry<String, Supplier<Throwable>> failure : failures.entrySet()) {
      String name = failure.getKey() + ".search";   // one breaker family per kind of failure
      Tool<Request, String> tool = Tool.of(descriptor.apply(name),
          r -> Mono.error(() -> toolError(failure.getValue().get())), String.class);
      // six calls (the breakers open on the way), the last two with the same arguments (a kept failure is replayed)
      StepVerifier.withVirtualTime(() -> Flux.range(0, 6)
              .concatMap(i -> tool.outcome(new Request("q" + Math.min(i, 4), API_KEY, ACCOUNT)))
              .doOnNext(outcomes::add)
              .then(tool.call(request).onErrorResume(e -> {
                see(e);
                return Mono.empty();
              }))
              .then(Mono.deferContextual(ctx -> Mono.just(FailureMemory.from(ctx).render())))
              .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(5)).build())))
          .thenAwait(Duration.ofMinutes(1))
          .assertNext(memory -> {
            assertThat(memory).contains(name);
            seen.add(memory);
          })
          .verifyComplete();
    }
    Tool<Request, String> ok = Tool.of(descriptor.apply("flights.ok"), r -> Mono.just("fine"), String.class);
    seen.addAll(List.of(ok.toString(), ok.descriptor().toString(), ok.descriptor().retry().toString(),
        idempotency.toString()));
    StepVerifier.withVirtualTime(() -> ok.outcome(request)).assertNext(outcomes::add).verifyComplete();

    assertThat(outcomes).hasSize(failures.size() * 6 + 1);
    assertThat(outcomes).anySatisfy(o -> assertThat(o.forModel()).contains("kind: circuit_open"));
    assertThat(outcomes).anySatisfy(o -> assertThat(o.forModel()).contains("kind: invalid_argument"));
    for (ToolOutcome<String> outcome : outcomes) {
      seen.add(outcome.forModel());
      seen.add(outcome.toString());
      if (outcome instanceof ToolOutcome.Failure<String> failure) {
        seen.add(failure.feedback().render());
        assertThat(toolErrors.contains(failure.error()) || failure.error() instanceof BreakwaterException)
            .as("the error of %s is the tool's own or Breakwater's", failure).isTrue();
        see(failure.error());
      }
    }
    assertThat(events).hasSize(outcomes.size() + failures.size());
    assertThat(String.join("\n", events)).contains("\"apiKey\":\"[redacted]\"", "\"accountRef\":\"[redacted]\"",
        "[redacted]");
    assertNothingLeaked();
  }

  /**
   * Issue 15, high 3: {@code access_token}, {@code refresh_token}, {@code client_secret}, {@code x-api-key} and
   * {@code private_key} were missed as argument names and inside error texts, and quoted values were masked in part.
   */
  @Test
  void theUsualCredentialNamesAreMaskedInArgumentsAndInErrorTexts() {
    List<String> secrets = List.of("at-9Q1", "rt-8W2", "cs-7E3", "xk-6R4", "pk-5T5", "pw-4Y6", "tw-3U7", "ck-2I8");
    Map<String, String> args = new java.util.LinkedHashMap<>();
    args.put("query", "flights");
    args.put("access_token", secrets.get(0));
    args.put("refresh_token", secrets.get(1));
    args.put("client_secret", secrets.get(2));
    args.put("x-api-key", secrets.get(3));
    args.put("private_key", secrets.get(4));
    // a server error quoting other credentials than the arguments', in every usual form
    String text = "refused GET /cb?code=1&access_token=" + secrets.get(0) + "x&refresh_token=" + secrets.get(1)
        + "x; {\"client_secret\":\"a\\\"" + secrets.get(2) + "\",\"password\":\"" + secrets.get(5)
        + "\"} x-api-key: " + secrets.get(3) + "x, private_key='two " + secrets.get(4) + "x', apiKey='two "
        + secrets.get(6) + "' Cookie: sid=1; session=" + secrets.get(7);
    Tool<Map<String, String>, String> tool = Tool.of(ToolDescriptor.builder("vault.read")
            .sideEffect(SideEffect.READ_ONLY).retry(retry("vault", 0).build())
            .logArgs("query", "access_token", "x-api-key", "private_key").meterRegistry(meters)
            .eventLog(events::add).build(),
        a -> Mono.error(() -> toolError(new HttpStatusException(502, Map.of(), text))), new com.fasterxml.jackson
            .core.type.TypeReference<String>() { });
    StepVerifier.withVirtualTime(() -> tool.outcome(args)
            .concatWith(tool.outcome(args).transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(1))
                .build())))
            .doOnNext(o -> {
              seen.add(o.forModel());
              seen.add(o.toString());
              see(((ToolOutcome.Failure<String>) o).error());
            }))
        .expectNextCount(2).verifyComplete();
    assertThat(seen).anySatisfy(t -> assertThat(t).contains("access_token=[redacted]", "\"client_secret\":"
        + "[redacted]", "x-api-key: [redacted]", "private_key=[redacted]", "apiKey=[redacted]"));
    List<String> everything = new ArrayList<>(seen);
    everything.addAll(events);
    everything.addAll(logs().lines().toList());
    assertThat(events).isNotEmpty();
    assertThat(everything).allSatisfy(t -> assertThat(t).doesNotContain(secrets));
  }

  // --- helpers -------------------------------------------------------------------------------------------------

  /** An error message that quotes both secrets, once by name and once bare. */
  @Test
  void theLlmClientNeverQuotesItsKeyOrTheRequestsSecretsEvenWhenTheServerEchoesThem() {
    AtomicInteger requests = new AtomicInteger();
    String sse = "text/event-stream";
    DisposableServer server = HttpServer.create().host("127.0.0.1").port(0).handle((req, res) -> {
      int n = requests.getAndIncrement();
      Mono<String> answer = switch (n) {
        case 0 -> Mono.just("{\"error\":{\"message\":\"Incorrect API key provided: " + API_KEY
            + ". You sent {\\\"apiKey\\\": \\\"" + API_KEY + "\\\"}\"}}");
        case 1 -> Mono.just("event: error\ndata: {\"error\":{\"type\":\"invalid_request_error\",\"message\":"
            + "\"Authorization: Bearer " + API_KEY + " rejected\\r\\nfor apiKey=" + API_KEY + "\"}}\n\n");
        default -> Mono.just("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Lyon\"}}]}\n\n"
            + "data: {\"error\":{\"code\":400,\"message\":\"value " + API_KEY + " is not allowed\"}}\n\n");
      };
      return res.status(n == 0 ? 401 : 200).header("Content-Type", n == 0 ? "application/json" : sse)
          .sendString(req.receive().aggregate().asString().then(answer));
    }).bindNow();
    try {
      LlmStreamClient client = LlmStreamClient.builder("http://127.0.0.1:" + server.port(), Dialect.OPENAI_CHAT)
          .header("Authorization", "Bearer " + API_KEY).header("x-api-key", API_KEY)
          .retry(retry("llm", 0).build())
          .timeouts(StreamTimeouts.builder().firstItem(Duration.ofSeconds(60)).idle(Duration.ofSeconds(30)).build())
          .meterRegistry(meters)
          .callListener(e -> seen.add(e.toString()))
          .build();
      Map<String, Object> llmRequest = Map.of("model", "m", "apiKey", API_KEY, "accountRef", ACCOUNT,
          "messages", List.of(Map.of("role", "user", "content", "flights for " + ACCOUNT)));
      for (int i = 0; i < 3; i++) {
        Throwable error = client.stream(llmRequest).as(LlmResponse::aggregate).then(Mono.<Throwable>empty())
            .onErrorResume(Mono::just).block(Duration.ofSeconds(90));   // a real server: slow on a loaded machine
        assertThat(error).isNotNull();
        see(error);
        LlmResponse.partialOf(error).ifPresent(r -> seen.add(r.toString()));
      }
      assertThat(requests).hasValue(3);
    } finally {
      server.disposeNow();
    }
    assertThatThrownBy(() -> LlmStreamClient.builder("https://bob:" + API_KEY + "@api.example.com",
        Dialect.OPENAI_CHAT).build()).satisfies(this::see);
    assertNothingLeaked();
  }

  private static String leaky() {
    return "upstream refused apiKey=" + API_KEY + ", accountRef: " + ACCOUNT + " (no account " + ACCOUNT + ")";
  }

  private <E extends Throwable> E toolError(E error) {
    toolErrors.add(error);
    return error;
  }

  private RetryPolicy.Builder retry(String name, int maxRetries) {
    return RetryPolicy.builder().name(name).maxRetries(maxRetries).backoff(Backoff.fixed(Duration.ofMillis(100)))
        .timeoutBase(Duration.ZERO).budget(RetryBudget.unlimited()).meterRegistry(meters);
  }

  private void expectTimeout(Supplier<Mono<?>> call, Class<? extends Throwable> type) {
    StepVerifier.withVirtualTime(call::get).thenAwait(Duration.ofSeconds(1)).expectErrorSatisfies(e -> {
      assertThat(e).isInstanceOf(type);
      see(e);
    }).verify(VERIFY);
  }

  private void expectBreakwaterError(Mono<?> call, Class<? extends Throwable> type) {
    StepVerifier.create(call).expectErrorSatisfies(e -> {
      assertThat(e).isInstanceOf(type);
      see(e);
    }).verify(VERIFY);
  }

  /**
   * Records the message and text of every throwable in {@code error}'s chain (causes and suppressed) that the tool
   * did not throw itself.
   */
  private void see(Throwable error) {
    see(error, Collections.newSetFromMap(new IdentityHashMap<>()));
  }

  private void see(Throwable error, Set<Throwable> visited) {
    if (error == null || !visited.add(error) || toolErrors.contains(error)) {
      return;
    }
    if (error instanceof CachedFailureException replayed
        && toolErrors.stream().anyMatch(t -> replayed.getMessage().equals(t.getMessage()))) {
      // By design: a kept failure is replayed to later callers of the same key (same namespace) with the tool's
      // own message, as a kept result is replayed. It is the tool's text, not Breakwater's.
      return;
    }
    seen.add(String.valueOf(error.getMessage()));
    seen.add(error.toString());
    see(error.getCause(), visited);
    for (Throwable suppressed : error.getSuppressed()) {
      see(suppressed, visited);
    }
  }

  private String logs() {
    System.err.flush();
    synchronized (logs) {
      return logs.toString(StandardCharsets.UTF_8);
    }
  }

  private void assertNothingLeaked() {
    List<String> meterTexts = new ArrayList<>();
    for (Meter meter : meters.getMeters()) {
      meterTexts.add(meter.getId().toString());
    }
    for (Meter meter : Metrics.globalRegistry.getMeters()) {
      meterTexts.add(meter.getId().getName());
      for (Tag tag : meter.getId().getTags()) {
        meterTexts.add(tag.getKey() + "=" + tag.getValue());
      }
    }
    assertThat(seen).as("exception messages, feedback and outcomes").isNotEmpty()
        .allSatisfy(SecretsNeverLeakTest::holdsNoSecret);
    assertThat(events).as("tool call events").allSatisfy(SecretsNeverLeakTest::holdsNoSecret);
    assertThat(meterTexts).as("meter names and tags").allSatisfy(SecretsNeverLeakTest::holdsNoSecret);
    assertThat(logs().lines()).as("log lines").allSatisfy(SecretsNeverLeakTest::holdsNoSecret);
  }

  private static void holdsNoSecret(String text) {
    assertThat(text).doesNotContain(API_KEY).doesNotContain(ACCOUNT);
  }

  /** Copies what is written to both streams. */
  private static final class Tee extends OutputStream {
    private final OutputStream first;
    private final ByteArrayOutputStream second;

    Tee(OutputStream first, ByteArrayOutputStream second) {
      this.first = first;
      this.second = second;
    }

    @Override
    public void write(int b) {
      synchronized (second) {
        second.write(b);
      }
      try {
        first.write(b);
      } catch (java.io.IOException ignored) {
        // the console is best effort; the capture is what the test reads
      }
    }

    @Override
    public void write(byte[] b, int off, int len) {
      synchronized (second) {
        second.write(b, off, len);
      }
      try {
        first.write(b, off, len);
      } catch (java.io.IOException ignored) {
        // as above
      }
    }

    @Override
    public void flush() throws java.io.IOException {
      first.flush();
    }
  }

  /** Delegates claims; fails every completion with an error that quotes the outcome, as a driver's timeout may. */
  private static final class EchoingStore implements IdempotencyStore {
    private final IdempotencyStore delegate;

    EchoingStore(IdempotencyStore delegate) {
      this.delegate = delegate;
    }

    @Override
    public Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease) {
      return delegate.claim(key, fingerprint, owner, lease);
    }

    @Override
    public Mono<Boolean> complete(String key, String owner, Outcome outcome, Duration ttl) {
      return Mono.error(new IllegalStateException("Command execution timeout for command: (EVAL), params: ["
          + key + ", " + owner + ", " + outcome.resultJson() + ", " + outcome.failureMessage() + "]"));
    }

    @Override
    public Mono<Boolean> release(String key, String owner) {
      return delegate.release(key, owner);
    }

    @Override
    public Mono<Boolean> renew(String key, String owner, Duration lease) {
      return delegate.renew(key, owner, lease);
    }
  }

  /** A store that is down: every command fails with an error that quotes its arguments. */
  private static final class DownStore implements IdempotencyStore {
    @Override
    public Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease) {
      return Mono.error(new IllegalStateException("Unable to connect, command (EVAL), params: [" + key + ", "
          + fingerprint + ", " + owner + "]"));
    }

    @Override
    public Mono<Boolean> complete(String key, String owner, Outcome outcome, Duration ttl) {
      return Mono.error(new IllegalStateException("down: " + outcome));
    }

    @Override
    public Mono<Boolean> release(String key, String owner) {
      return Mono.error(new IllegalStateException("down: " + key));
    }

    @Override
    public Mono<Boolean> renew(String key, String owner, Duration lease) {
      return Mono.error(new IllegalStateException("down: " + key));
    }
  }
}
