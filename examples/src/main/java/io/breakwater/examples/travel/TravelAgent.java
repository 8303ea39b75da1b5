package io.breakwater.examples.travel;

import static io.breakwater.Breakwater.withTaskBudget;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmStreamClient;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;

/**
 * A travel-planner agent that survives its tools. It calls flights, hotels and attractions tools and books a
 * deposit on a local server scripted with real faults (a 28 s stall, a 429 with Retry-After, a burst of 503s, a
 * duplicated payment attempt), then streams its answer from a local OpenAI-compatible server that stalls once. It
 * finishes within its 15 s deadline with a degraded but useful plan, and prints a timeline and a metrics summary.
 *
 * <p>Its {@code main} first runs the same task without Breakwater ({@link PlainTravelAgent}) against fresh instances
 * of the same servers, then with it, and ends with a table of the two runs side by side.
 *
 * <p>This is the README's first command. With {@code --redis redis://host:port} the idempotency claims and retry
 * budgets live in Redis instead of memory.
 */
public final class TravelAgent {

  /** Arguments of the flights, hotels and attractions tools. */
  public record Trip(String from, String to, String date) {}

  // snippet:domain-deposit
  /** Arguments of the payment tool. */
  public record Deposit(String bookingId, int amountEuros) {}
  // end-snippet

  /** The model's scripted answer. */
  static final String ANSWER = "Fly BW456 on the 24th for 99 EUR, stay at Casa Breakwater for 87 EUR a night, and "
      + "walk the Alfama at dusk. Your deposit is paid once.";
  /** The words the model's first stream sends before it stalls. */
  static final int WORDS_BEFORE_STALL = 4;
  /** The attractions tool's fallback. */
  static final String OFFLINE_ATTRACTIONS = "[\"Walk the Alfama at dusk (offline suggestion)\"]";
  /** How long the demo lets a call of the plain run hang before it gives it up. */
  static final Duration DEMO_CUT = Duration.ofSeconds(8);

  private final PrintStream out;
  private final IdempotencyStore store;
  private final Function<String, RetryBudget> retryBudgets;
  private byte[] keySecret;
  private final MeterRegistry meters = new SimpleMeterRegistry();
  private final List<String> events = new ArrayList<>();
  private long startNanos;

  public TravelAgent(PrintStream out, IdempotencyStore store, Function<String, RetryBudget> retryBudgets) {
    this.out = out;
    this.store = store;
    this.retryBudgets = retryBudgets;
  }

  public static void main(String[] args) {
    String redis = null;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--redis") && i + 1 < args.length) {
        redis = args[++i];
      }
    }
    if (redis == null) {
      new TravelAgent(System.out, IdempotencyStore.inMemory(), name -> RetryBudget.ratio(0.2, 10)).compare(DEMO_CUT);
    } else {
      try (RedisBacking backing = RedisBacking.connect(redis)) {
        TravelAgent agent = new TravelAgent(System.out, backing.store(), backing::retryBudget);
        agent.keySecret = RedisBacking.keySecret();
        agent.compare(DEMO_CUT);
      }
    }
    Schedulers.shutdownNow();
  }

  /** The in-memory store keys with a secret of its own; a shared store needs the one every instance shares. */
  private IdempotencyPolicy idempotencyPolicy() {
    IdempotencyPolicy.Builder policy = IdempotencyPolicy.builder(store).meterRegistry(meters);
    return keySecret == null ? policy.build() : policy.keySecret(keySecret).build();
  }

  /**
   * The demo: plans the trip without Breakwater ({@link PlainTravelAgent}, whose hanging calls are cut after
   * {@code cut}), then with it, each against freshly started scripted servers, and prints the two runs side by side.
   */
  public Comparison compare(Duration cut) {
    RunSummary without = new PlainTravelAgent(out, cut).run();
    Report with = run();
    out.println();
    RunSummary.printTable(out, without, with.summary());
    return new Comparison(without, with);
  }

  /** The demo's two runs, for the example's test. */
  public record Comparison(RunSummary without, Report with) {}

  /** Plans one trip against freshly started scripted servers; returns what happened, for tests. */
  public Report run() {
    try (ScriptedToolServer tools = new ScriptedToolServer();
        ScriptedLlmServer llm = new ScriptedLlmServer(ANSWER, WORDS_BEFORE_STALL)) {
      return plan(tools, llm);
    }
  }

  private Report plan(ScriptedToolServer tools, ScriptedLlmServer llm) {
    startNanos = now();
    HttpClient http = DeadlineHeader.standard().sendOn(HttpClient.create().host("127.0.0.1").port(tools.port())
        .disableRetry(true));
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).meterRegistry(meters).build())
        .familyBreakers(name -> CircuitBreaker.builder(name).meterRegistry(meters).build())
        .build();
    Trip trip = new Trip("LHR", "LIS", "2026-12-24");

    Tool<Trip, String> flights = Tool.of(descriptor("travel.flights", SideEffect.READ_ONLY, breakers)
        .timeouts(CallTimeouts.fixed(Duration.ofSeconds(2))).build(), (Trip t) -> get(http, "/flights"), String.class);
    Tool<Trip, String> hotels = Tool.of(descriptor("travel.hotels", SideEffect.READ_ONLY, breakers).build(),
        (Trip t) -> get(http, "/hotels"), String.class);
    Tool<Trip, String> attractions = Tool.of(descriptor("travel.attractions", SideEffect.READ_ONLY, breakers)
            .build(), (Trip t) -> get(http, "/attractions"), String.class)
        .withFallbacks(Fallbacks.<Trip, String>builder()
            .orDefault(OFFLINE_ATTRACTIONS).build());
    Tool<Deposit, String> payments = Tool.of(descriptor("payments.deposit", SideEffect.NON_IDEMPOTENT_WRITE,
                breakers)
            .idempotency(idempotencyPolicy()).singleTenant().build(),
            (Deposit d) -> post(http, "/payments", d), String.class)
        .withIdempotencyKey((Deposit d) -> IdempotencyKey.explicit("payments.deposit", d.bookingId(), d));
    // A first token within 2 s, then a token at least every second: keep-alives alone do not count. The scripted
    // server gives event ids, so a stream that stalls after its first words is resumed with Last-Event-ID.
    LlmStreamClient model = LlmStreamClient.builder(llm.baseUrl(), Dialect.OPENAI_CHAT)
        .timeouts(StreamTimeouts.builder().firstItem(Duration.ofSeconds(2)).idle(Duration.ofSeconds(1))
            .meterRegistry(meters).build())
        .meterRegistry(meters)
        .build();

    TaskBudget budget = TaskBudget.builder(Duration.ofSeconds(15)).name("plan-trip").retries(8).maxSteps(12).build();
    out.println("With Breakwater: the travel agent plans a trip LHR to LIS within " + budget.deadline().budget().toSeconds()
        + " s (tools on 127.0.0.1:" + tools.port() + ", model at " + llm.baseUrl() + ")");

    Map<String, String> found = new LinkedHashMap<>();
    StringBuilder answer = new StringBuilder();
    Mono<String> task = Mono.zip(
            step("flights", flights.outcome(trip), found),
            step("hotels", hotels.outcome(trip), found),
            step("attractions", attractions.outcome(trip), found))
        .then(Mono.defer(() -> {
          Deposit deposit = new Deposit("booking-" + trip.date(), 50);
          // The model asked for the deposit twice (a duplicated attempt): the key makes it one charge.
          return step("deposit", payments.outcome(deposit), found)
              .then(step("deposit (again)", payments.outcome(deposit), found));
        }))
        .thenMany(Flux.defer(() -> {
          line("model: streaming the plan (the first stream stalls after four words; the client resumes it)");
          return model.stream(Map.of("model", "local-planner", "stream", true, "messages", List.of(
              Map.of("role", "user", "content", "Plan the trip with: " + found))));
        }))
        .ofType(LlmDelta.Text.class).map(LlmDelta.Text::text)
        .doOnNext(answer::append)
        .then(Mono.fromCallable(answer::toString))
        .transformDeferred(withTaskBudget(budget));

    String plan = task.block(Duration.ofSeconds(30));
    long tookMillis = TimeUnit.NANOSECONDS.toMillis(now() - startNanos);
    line("answer: " + plan);
    out.println();
    out.println("Finished in " + tookMillis + " ms, within the " + budget.deadline().budget().toSeconds()
        + " s deadline.");
    out.println("Server side: flights requests " + tools.flightRequests() + " (stalled ones cancelled: "
        + tools.stalledRequestsCancelled() + "), hotels " + tools.hotelRequests() + ", attractions "
        + tools.attractionRequests() + ", deposits charged " + tools.charges() + "; model streams "
        + llm.requests() + " (stalled ones closed: " + llm.stalledStreamsClosed() + ")");
    printMetrics();
    Map<String, String> notes = new HashMap<>();
    if (tools.stalledRequestsCancelled() > 0) {
      notes.put("flights", "the stalled one cut at 2 s, retried");
    }
    if (llm.stalledStreamsClosed() > 0) {
      notes.put("model", "the stalled one resumed");
    }
    RunSummary summary = RunSummary.of(String.format("%.1f s (deadline %d s)", tookMillis / 1e3,
            budget.deadline().budget().toSeconds()),
        plan == null ? "no answer" : "the plan, " + ScriptedLlmServer.words(plan) + " words", notes, tools, llm, plan);
    return new Report(plan, tookMillis, tools.charges(), tools.stalledRequestsCancelled(), llm.requests(),
        found.get("attractions"), List.copyOf(events), summary);
  }

  /** What a run did, for the example's test. */
  public record Report(String answer, long tookMillis, int charges, int stalledFlightsCancelled, int modelStreams,
      String attractions, List<String> events, RunSummary summary) {}

  private ToolDescriptor.Builder descriptor(String name, SideEffect sideEffect, CircuitBreakerRegistry breakers) {
    return ToolDescriptor.builder(name)
        .sideEffect(sideEffect)
        .breakers(breakers)
        .retry(RetryPolicy.builder().name(name).maxRetries(2)
            .backoff(Backoff.fullJitter(Duration.ofMillis(100), Duration.ofSeconds(1)))
            .budget(retryBudgets.apply(name)).meterRegistry(meters).build())
        .meterRegistry(meters)
        .eventLog(events::add);
  }

  private Mono<String> step(String what, Mono<? extends ToolOutcome<String>> outcome, Map<String, String> found) {
    return outcome.map(o -> {
      String text = o.forModel().replace('\n', ' ');
      line(what + ": " + text);
      synchronized (found) {
        found.put(what, text);
      }
      return text;
    });
  }

  private static Mono<String> get(HttpClient http, String path) {
    return http.get().uri(path).responseSingle((res, body) -> res.status().code() >= 400
        ? body.asString().defaultIfEmpty("").flatMap(b -> Mono.error(new HttpStatusException(res.status().code(),
            headers(res.responseHeaders()), b)))
        : body.asString());
  }

  private static Mono<String> post(HttpClient http, String path, Deposit deposit) {
    // The key also goes to the dependency: the last line of defence if a store ever loses a claim.
    return http.headers(h -> h.set("Idempotency-Key", deposit.bookingId()))
        .post().uri(path)
        .responseSingle((res, body) -> body.asString());
  }

  private static Map<String, List<String>> headers(io.netty.handler.codec.http.HttpHeaders headers) {
    Map<String, List<String>> map = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    headers.forEach(e -> map.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue()));
    return map;
  }

  private synchronized void line(String text) {
    out.printf("%7.2f s  %s%n", (now() - startNanos) / 1e9, text);
  }

  private static long now() {
    return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
  }

  private void printMetrics() {
    out.println("Metrics:");
    Map<String, Double> lines = new TreeMap<>();
    for (Meter meter : meters.getMeters()) {
      String name = meter.getId().getName();
      // Counters and timers count calls; a distribution summary's count is a number of samples, so it is left out.
      if (!name.startsWith("breakwater.") || meter instanceof io.micrometer.core.instrument.DistributionSummary) {
        continue;
      }
      StringBuilder key = new StringBuilder(name);
      meter.getId().getTags().forEach(t -> key.append(' ').append(t.getKey()).append('=').append(t.getValue()));
      for (var measurement : meter.measure()) {
        if (measurement.getStatistic().name().equals("COUNT") && measurement.getValue() > 0) {
          lines.merge(key.toString(), measurement.getValue(), Double::sum);
        }
      }
    }
    lines.forEach((k, v) -> out.printf("  %-90s %5.0f%n", k, v));
  }
}
