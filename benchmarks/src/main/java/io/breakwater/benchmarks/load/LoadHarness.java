package io.breakwater.benchmarks.load;

import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.LlmStreamClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The load and soak harness of issue 19: a second JVM serves an OpenAI-compatible stream and a tool endpoint on
 * loopback ({@link LoadServer}); this JVM runs, in order, a cold-start soak (first, while the JVM is cold), a streaming
 * ramp with the default client and a tuned pool, the first-token budget under retries, faults under load, a
 * cancellation storm, and tool calls at rising rates against a hand-written Reactor baseline. It prints the figures
 * and the done-when checks as Markdown (stdout; progress on stderr) and exits 1 if a check failed.
 *
 * <pre>
 * mvn -B -ntp -q -pl benchmarks -am package -DskipTests
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.load.LoadHarness full   # loads of about 4 minutes
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.load.LoadHarness smoke  # seconds
 * </pre>
 *
 * <p>Wall-clock time is what it measures, so it reads {@code System.nanoTime()}; run it on a quiet machine.
 */
public final class LoadHarness {

  /** Counts and durations of one run. */
  public record Plan(String name, Duration soak, int soakStreams, int soakRate, List<Integer> ramp, int reference,
      Duration firstItem, Duration slack, Duration faultFirstItem, int faultStreams, int faultBackground, int storm,
      List<Integer> toolRates, Duration toolDuration) {

    /** The loads: 300 streams + 500 calls/s for 60 s, 100 → 2 000 streams, 500 → 4 000 calls/s. */
    public static final Plan FULL = new Plan("full", Duration.ofSeconds(60), 300, 500, List.of(100, 500, 1000, 2000),
        1000, Duration.ofSeconds(10), Duration.ofSeconds(2), Duration.ofSeconds(2), 100, 1000, 2000,
        List.of(500, 1000, 2000, 4000), Duration.ofSeconds(10));

    /** A few seconds with small counts: proves the harness runs end to end, measures nothing. */
    public static final Plan SMOKE = new Plan("smoke", Duration.ofSeconds(2), 8, 20, List.of(5, 10), 10,
        Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofMillis(600), 2, 10, 20, List.of(20, 40),
        Duration.ofSeconds(1));
  }

  private static final Duration LIMIT = Duration.ofMinutes(3);
  private static final String HEALTHY = "tokens=50;gapMs=20";

  private final Plan plan;
  private final ServerProcess server;
  private final LiveTimers timers = new LiveTimers(Schedulers.parallel());
  private final StreamCalls streams;
  private final ToolCalls tools;
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final Report report = new Report();

  private LoadHarness(Plan plan, ServerProcess server) {
    this.plan = plan;
    this.server = server;
    this.streams = new StreamCalls(server.baseUrl(), () -> timers);
    this.tools = new ToolCalls(server.baseUrl());
  }

  public static void main(String[] args) throws Exception {
    Plan plan = args.length > 0 && "full".equals(args[0]) ? Plan.FULL : Plan.SMOKE;
    Report report = run(plan);
    System.out.println(report.markdown("Load harness, plan '" + plan.name() + "', "
        + Runtime.getRuntime().availableProcessors() + " cores, JDK " + Runtime.version()));
    System.exit(report.allPassed() ? 0 : 1);
  }

  /** Runs every scenario of {@code plan} against a fresh server JVM and returns the figures and checks. */
  public static Report run(Plan plan) throws Exception {
    try (ServerProcess server = ServerProcess.start("full".equals(plan.name()) ? "1g" : "256m")) {
      LoadHarness harness = new LoadHarness(plan, server);
      Metrics.globalRegistry.add(harness.meters);
      try {
        harness.coldStartSoak();
        harness.streamingRamp();
        harness.streams.closePools();
        for (int n : plan.ramp()) {
          harness.firstTokenBudget(n);
          harness.streams.closePools();
        }
        harness.faultsUnderLoad();
        harness.streams.closePools();
        harness.cancellationStorm();
        harness.streams.closePools();
        harness.toolRates();
      } finally {
        Metrics.globalRegistry.remove(harness.meters);
      }
      return harness.report;
    }
  }

  private void coldStartSoak() throws Exception {
    String load = plan.soakStreams() + " streams + " + plan.soakRate() + " tool calls/s, " + plan.soak().toSeconds()
        + " s, cold JVM, defaults";
    long opensBefore = breakerOpens();
    ServerProcess.Stats before = server.stats();
    LlmStreamClient client = streams.defaultClient(HEALTHY);
    CompletableFuture<List<StreamCalls.Outcome>> streamed =
        streams.soak(client, plan.soakStreams(), plan.soak()).collectList().toFuture();
    CompletableFuture<List<ToolCalls.Outcome>> called =
        ToolCalls.paced(tools.breakwater("latencyMs=5;failPct=0"), plan.soakRate(), plan.soak()).collectList()
            .toFuture();
    TimeUnit.MILLISECONDS.sleep(plan.soak().toMillis() / 2);
    ServerProcess.Stats half = server.stats();
    List<ToolCalls.Outcome> calls = called.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
    List<StreamCalls.Outcome> outcomes = streamed.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
    ServerProcess.Stats after = server.stats();
    long halfNanos = plan.soak().toNanos() / 2;
    long fallbacks = 0;
    for (int window = 0; window < 2; window++) {
      int w = window;
      List<ToolCalls.Outcome> in = calls.stream()
          .filter(o -> (o.startNanos() < halfNanos) == (w == 0)).toList();
      long fell = in.stream().filter(ToolCalls.Outcome::fallback).count();
      fallbacks += fell;
      String span = w == 0 ? "first half" : "second half";
      report.figure("cold-start soak", load, "tool fallbacks, " + span, Report.percent(fell, in.size()));
      long served = w == 0 ? half.requests("tool") - before.requests("tool")
          : after.requests("tool") - half.requests("tool");
      report.figure("cold-start soak", load, "tool requests the server saw, " + span, served);
    }
    long opens = breakerOpens() - opensBefore;
    report.figure("cold-start soak", load, "breaker opens", opens);
    report.figure("cold-start soak", load, "tool call p50 / p99",
        Report.ms(StreamCalls.percentile(ToolCalls.took(calls), 50)) + " / "
            + Report.ms(StreamCalls.percentile(ToolCalls.took(calls), 99)));
    streamFigures("cold-start soak", load, outcomes);
    report.check("cold start: fallbacks ≤ 1 % of calls in the first " + plan.soak().toSeconds()
        + " s, server healthy", Report.percent(fallbacks, calls.size()), fallbacks * 100 <= calls.size());
    report.check("cold start: no breaker opens", opens + " opens", opens == 0);
  }

  private void streamingRamp() {
    LlmStreamClient shared = streams.defaultClient(HEALTHY);
    for (int n : plan.ramp()) {
      String load = n + " streams × 50 chunks, 20 ms apart, default client";
      long start = System.nanoTime();
      List<StreamCalls.Outcome> outcomes = streams.run(shared, n, LIMIT);
      long took = System.nanoTime() - start;
      long chunks = outcomes.stream().mapToLong(StreamCalls.Outcome::chunks).sum();
      streamFigures("streaming ramp", load, outcomes);
      report.figure("streaming ramp", load, "chunks/s", Math.round(chunks / (took / 1e9)));
      if (n == plan.reference()) {
        List<StreamCalls.Outcome> tuned =
            streams.run(streams.client(HEALTHY, streams.defaultTimeouts(), 2 * n), n, LIMIT);
        String tunedLoad = n + " streams, tuned pool (" + 2 * n + " connections)";
        streamFigures("streaming ramp", tunedLoad, tuned);
        long idle = outcomes.stream().filter(o -> "idle_timeout".equals(o.error())).count();
        long p50 = firstChunkPercentile(outcomes, 50);
        long tunedP50 = firstChunkPercentile(tuned, 50);
        report.check(n + " streams, default client: no idle timeout on a healthy stream", idle + " idle timeouts",
            idle == 0);
        report.check(n + " streams, default client: median time to first token ≤ 2× a tuned pool's",
            Report.ms(p50) + " vs " + Report.ms(tunedP50), p50 <= 2 * Math.max(tunedP50, 1));
      }
    }
  }

  private void firstTokenBudget(int n) {
    String script = HEALTHY + ";firstStallPct=10";
    String load = n + " streams, 10 % of attempts (first or retried) stall before their first token, firstItem "
        + plan.firstItem().toSeconds() + " s";
    ServerProcess.Stats before = server.stats();
    List<StreamCalls.Outcome> outcomes = streams.run(
        streams.client(script, streams.timeouts(plan.firstItem(), Duration.ofSeconds(3)), 2 * n), n, LIMIT);
    ServerProcess.Stats after = server.stats();
    List<Long> waits = outcomes.stream().map(StreamCalls.Outcome::firstSignalNanos).toList();
    long max = StreamCalls.percentile(waits, 100);
    long bound = plan.firstItem().plus(plan.slack()).toNanos();
    long over = waits.stream().filter(w -> w > bound).count();
    report.figure("first-token budget", load, "wait for first token or error p50 / p99 / max",
        Report.ms(StreamCalls.percentile(waits, 50)) + " / " + Report.ms(StreamCalls.percentile(waits, 99)) + " / "
            + Report.ms(max));
    report.figure("first-token budget", load, "attempts the server saw (stalled)",
        (after.requests("stream.healthy") - before.requests("stream.healthy")) + " ("
            + (after.requests("stream.firstStall") - before.requests("stream.firstStall")) + ")");
    report.figure("first-token budget", load, "errors", StreamCalls.errors(outcomes));
    report.check("firstItem " + plan.firstItem().toSeconds() + " s, " + n + " streams: no caller waits more than "
        + plan.firstItem().plus(plan.slack()).toSeconds() + " s for its first token", over + " callers over, max "
        + Report.ms(max), over == 0);
  }

  private void faultsUnderLoad() {
    String[] faults = {"mode=stall;stallAfter=3;gapMs=20", "mode=heartbeat;gapMs=200", "mode=5xx", "mode=429"};
    String load = plan.faultStreams() + " streams per fault beside " + plan.faultBackground()
        + " healthy ones, firstItem " + plan.faultFirstItem().toMillis() + " ms, idle "
        + plan.faultFirstItem().dividedBy(2).toMillis() + " ms";
    ServerProcess.Stats before = server.stats();
    List<CompletableFuture<List<StreamCalls.Outcome>>> runs = new ArrayList<>();
    StreamTimeouts tight = streams.timeouts(plan.faultFirstItem(), plan.faultFirstItem().dividedBy(2));
    for (String fault : faults) {
      runs.add(streams.all(streams.client(fault, tight, 0), plan.faultStreams()).toFuture());
    }
    CompletableFuture<List<StreamCalls.Outcome>> healthy = streams.all(
        streams.client(HEALTHY, streams.defaultTimeouts(), 2 * plan.faultBackground()), plan.faultBackground())
        .toFuture();
    runs.forEach(CompletableFuture::join);
    ServerProcess.Stats after = server.stats();
    for (int i = 0; i < faults.length; i++) {
      List<StreamCalls.Outcome> outcomes = runs.get(i).join();
      String mode = faults[i].split(";")[0].substring("mode=".length());
      long caught = outcomes.stream().filter(o -> o.error() != null).count();
      report.figure("faults under load", load, mode + ": streams ended in an error", caught + " of "
          + outcomes.size() + " " + StreamCalls.errors(outcomes) + ", slowest after "
          + Report.ms(outcomes.stream().mapToLong(StreamCalls.Outcome::endNanos).max().orElse(0)));
      report.figure("faults under load", load, mode + ": requests the server saw",
          after.requests("stream." + mode) - before.requests("stream." + mode));
    }
    streamFigures("faults under load", load + ", the healthy ones", healthy.join());
    report.figure("faults under load", load, "streams the server saw closed by the client",
        after.cancelled() - before.cancelled());
  }

  private void cancellationStorm() throws InterruptedException {
    int n = plan.storm();
    String load = n + " open streams cancelled at once";
    LlmStreamClient client = streams.client("tokens=1000000;gapMs=250", streams.defaultTimeouts(), 2 * n);
    long heapBefore = usedHeapAfterGc();
    int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
    ServerProcess.Stats before = server.stats();
    AtomicInteger started = new AtomicInteger();
    Disposable all = streams.hold(client, n, started);
    waitUntil(() -> started.get() >= n, LIMIT);
    long heapOpen = usedHeapAfterGc();
    ServerProcess.Stats open = server.stats();
    long timersOpen = timers.live();
    long cancelledAt = System.nanoTime();
    all.dispose();
    boolean closed = waitUntil(() -> server.stats().cancelled() - before.cancelled() >= n
        && server.stats().open() <= before.open(), LIMIT);
    long closeNanos = System.nanoTime() - cancelledAt;
    waitUntil(() -> timers.live() == 0, Duration.ofSeconds(30));
    ServerProcess.Stats after = server.stats();
    long heapAfter = usedHeapAfterGc();
    report.figure("cancellation storm", load, "streams open before the storm", started.get() + " of " + n
        + " (server connections " + open.open() + ")");
    // "bytes", not "B": a harness figure, which DocFiguresTest must not take for a benchmark row in docs/reliability.md
    report.figure("cancellation storm", load, "client heap per open stream (all of it: Netty, Reactor, Breakwater)",
        started.get() == 0 ? "n/a" : (heapOpen - heapBefore) / started.get() + " bytes");
    report.figure("cancellation storm", load, "streams the server saw cancelled", after.cancelled()
        - before.cancelled());
    report.figure("cancellation storm", load, "connections left open (server count, after − before)",
        Math.max(0, after.open() - before.open()));
    report.figure("cancellation storm", load, "time until every connection was closed",
        closed ? Report.ms(closeNanos) : "not within " + LIMIT.toSeconds() + " s");
    report.figure("cancellation storm", load, "timers pending: while open / after", timersOpen + " / "
        + timers.live());
    report.figure("cancellation storm", load, "client heap after the storm − before it (after GC)",
        (heapAfter - heapBefore) / 1024 + " KiB");
    report.figure("cancellation storm", load, "client threads before / after",
        threadsBefore + " / " + ManagementFactory.getThreadMXBean().getThreadCount());
    report.check("cancellation storm: every connection closed, no timer left", "cancelled "
        + (after.cancelled() - before.cancelled()) + " of " + n + ", timers left " + timers.live(),
        closed && timers.live() == 0);
  }

  private void toolRates() {
    ServerProcess.Stats before = server.stats();
    String script = "latencyMs=5;failPct=11";
    for (int rate : plan.toolRates()) {
      String load = rate + " calls/s for " + plan.toolDuration().toSeconds() + " s, 11 % of requests fail";
      toolRate("tool calls, Breakwater defaults", load, tools.breakwater(script), rate);
      toolRate("tool calls, Reactor baseline", load, tools.baseline(script), rate);
    }
    report.figure("tool calls", "all rates", "requests the server saw", server.stats().requests("tool")
        - before.requests("tool"));
  }

  private void toolRate(String scenario, String load, Function<String, Mono<String>> call, int rate) {
    long opensBefore = breakerOpens();
    long requestsBefore = server.stats().requests("tool");
    long start = System.nanoTime();
    List<ToolCalls.Outcome> calls = ToolCalls.paced(call, rate, plan.toolDuration()).collectList().block(LIMIT);
    long took = System.nanoTime() - start;
    long fell = calls.stream().filter(ToolCalls.Outcome::fallback).count();
    long failed = calls.stream().filter(ToolCalls.Outcome::failed).count();
    report.figure(scenario, load, "fallbacks / errors", Report.percent(fell, calls.size()) + " / " + failed);
    report.figure(scenario, load, "requests the server saw", server.stats().requests("tool") - requestsBefore);
    report.figure(scenario, load, "breaker opens", breakerOpens() - opensBefore);
    report.figure(scenario, load, "call p50 / p99, achieved rate",
        Report.ms(StreamCalls.percentile(ToolCalls.took(calls), 50)) + " / "
            + Report.ms(StreamCalls.percentile(ToolCalls.took(calls), 99)) + ", "
            + Math.round(calls.size() / (took / 1e9)) + "/s");
  }

  private void streamFigures(String scenario, String load, List<StreamCalls.Outcome> outcomes) {
    long idle = outcomes.stream().filter(o -> "idle_timeout".equals(o.error())).count();
    report.figure(scenario, load, "streams completed / idle timeouts / errors",
        outcomes.stream().filter(o -> o.error() == null).count() + " / " + idle + " / "
            + StreamCalls.errors(outcomes));
    report.figure(scenario, load, "time to first token p50 / p99",
        Report.ms(firstChunkPercentile(outcomes, 50)) + " / " + Report.ms(firstChunkPercentile(outcomes, 99)));
  }

  private static long firstChunkPercentile(List<StreamCalls.Outcome> outcomes, double p) {
    return StreamCalls.percentile(outcomes.stream().filter(o -> o.firstNanos() >= 0)
        .map(StreamCalls.Outcome::firstNanos).toList(), p);
  }

  private long breakerOpens() {
    return Math.round(meters.find("breakwater.breaker.transitions").tag("to", "open").counters().stream()
        .mapToDouble(Counter::count).sum());
  }

  private static long usedHeapAfterGc() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static boolean waitUntil(BooleanSupplier condition, Duration limit) throws InterruptedException {
    long end = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        return false;
      }
      TimeUnit.MILLISECONDS.sleep(100);
    }
    return true;
  }
}
