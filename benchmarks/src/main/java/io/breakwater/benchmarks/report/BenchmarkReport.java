package io.breakwater.benchmarks.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns one JMH JSON result file into {@code docs/benchmarks.md} and an SVG chart of the overheads. Every ratio is
 * computed from figures of the same run: overhead = score − the baseline of the same benchmark class.
 *
 * <p>Every table of the page is named for quoting, by a line {@code <!-- figures: <name> key=<n> -->} right above
 * it: another page quotes rows of it under {@code <!-- figures: <name> -->}, and {@code DocFiguresTest} (examples)
 * fails the build when a quoted row is not the generated one, or when a page gives a benchmark figure of its own
 * ({@code -Dbreakwater.snippets.update=true} rewrites the quoted rows from this page). A row is known by its first
 * {@code n} cells, which stay the same from run to run.
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.breakwater.benchmarks.report.BenchmarkReport jmh.json out.md out.svg
 * [--redis RedisThroughput's table] [--heap TenThousandStreamsTest's P8 line]
 * [--retry-share RetryBudgetsTest's outage lines]}
 */
public final class BenchmarkReport {

  /** One measured variant: a benchmark method, with its JMH parameters if any. */
  record Result(String className, String variant, double score, double error, String unit, double bytesPerOp,
      int threads) {}

  /** One bar of the chart. */
  record Bar(String label, double value, boolean ours) {}

  /** One row of the overhead table: Breakwater's variant and its peer's, over the same baseline. */
  record Overhead(String label, String cls, String base, String ours, String peerLabel, String peer) {}

  private static final List<Overhead> OVERHEADS = List.of(
      new Overhead("`guardedBy`, 1 thread", "GuardedByBenchmark", "oneThread[variant=baseline]",
          "oneThread[variant=breakwater]", "Resilience4j `CircuitBreakerOperator`", "oneThread[variant=resilience4j]"),
      new Overhead("`guardedBy`, 2 threads", "GuardedByBenchmark", "twoThreads[variant=baseline]",
          "twoThreads[variant=breakwater]", "Resilience4j `CircuitBreakerOperator`",
          "twoThreads[variant=resilience4j]"),
      new Overhead("`retryWithBudget`, success", "RetrySuccessBenchmark", "baseline", "breakwaterRetryWithBudget",
          "Resilience4j `RetryOperator`", "resilience4jRetryOperator"),
      new Overhead("`retryWithBudget`, success", "RetrySuccessBenchmark", "baseline", "breakwaterRetryWithBudget",
          "Reactor `retryWhen(Retry.backoff)`", "reactorRetryWhenBackoff"),
      new Overhead("`withDeadline`", "DeadlineBenchmark", "baseline", "deadline", "Reactor `timeout`",
          "reactorTimeout"),
      new Overhead("`withDeadline` + `perCallTimeout`", "DeadlineBenchmark", "baseline", "deadlineAndPerCallTimeout",
          "Reactor `timeout`", "reactorTimeout"),
      new Overhead("`idleTimeout`, per element", "IdleTimeoutBenchmark", "bare", "idleTimeout",
          "Reactor `Flux.timeout`", "reactorFluxTimeout"),
      new Overhead("deadline + retry + breaker + per-call timeout", "PipelineBenchmark", "baseline", "breakwater",
          "Resilience4j TimeLimiter + CircuitBreaker + Retry", "resilience4j"),
      new Overhead("SSE decoding, per event", "SseDecodeBenchmark", "baselineChunksOnly", "breakwater",
          "Spring `ServerSentEventHttpMessageReader`", "spring"),
      new Overhead("`idempotentBy` hit", "IdempotencyBenchmark", "baseline", "hit", null, null),
      new Overhead("`idempotentBy` miss (derive, claim, call, store)", "IdempotencyBenchmark", "baseline", "miss",
          null, null),
      new Overhead("`Tool.of` call, events on", "ToolCallBenchmark", "baseline", "tool", null, null));

  /** The numbers of calls in flight of the asynchronous benchmarks ({@code AsyncCallBenchmark}). */
  static final List<String> IN_FLIGHT = List.of("1", "10000");

  /** The numbers of calls in flight of the chain built per call ({@code PipelinePerCallAsyncBenchmark}). */
  static final List<String> IN_FLIGHT_PER_CALL = List.of("1", "1000", "10000");

  /**
   * The overhead rows on asynchronous calls (the target rows, shown first): each at 1 and at 10 000 calls in flight,
   * a call answering after subscription, so that timeouts arm real timers and breakers time real calls.
   */
  private static final List<Overhead> ASYNC_OVERHEADS = asyncOverheads();

  private static List<Overhead> asyncOverheads() {
    List<Overhead> rows = new ArrayList<>();
    for (String n : IN_FLIGHT) {
      String calls = ", " + ("1".equals(n) ? "1 call" : "10 000 calls") + " in flight";
      rows.add(async(n, "`withDeadline`" + calls, "DeadlineAsyncBenchmark", "call", "deadline",
          "Reactor `timeout`", "reactorTimeout"));
      rows.add(async(n, "`withDeadline`" + calls, "DeadlineAsyncBenchmark", "call", "deadline",
          "Resilience4j `TimeLimiterOperator`", "resilience4jTimeLimiter"));
      rows.add(async(n, "`perCallTimeout`" + calls, "DeadlineAsyncBenchmark", "call", "perCallTimeout",
          "Reactor `timeout`", "reactorTimeout"));
      rows.add(async(n, "`withDeadline` + `perCallTimeout`" + calls, "DeadlineAsyncBenchmark", "call",
          "deadlineAndPerCallTimeout", "Reactor `timeout`", "reactorTimeout"));
      rows.add(async(n, "`guardedBy`, 1 thread" + calls, "GuardedByAsyncBenchmark", "oneThread", "breakwater",
          "Resilience4j `CircuitBreakerOperator`", "resilience4j"));
      rows.add(async(n, "`guardedBy`, 2 threads" + calls + " per thread", "GuardedByAsyncBenchmark", "twoThreads",
          "breakwater", "Resilience4j `CircuitBreakerOperator`", "resilience4j"));
      rows.add(async(n, "`retryWithBudget`, success" + calls, "RetrySuccessAsyncBenchmark", "call",
          "breakwaterRetryWithBudget", "Resilience4j `RetryOperator`", "resilience4jRetryOperator"));
      rows.add(async(n, "`retryWithBudget`, success" + calls, "RetrySuccessAsyncBenchmark", "call",
          "breakwaterRetryWithBudget", "Reactor `retryWhen(Retry.backoff)`", "reactorRetryWhenBackoff"));
      rows.add(async(n, "`idleTimeout`, per call" + calls, "StreamTimeoutsAsyncBenchmark", "call", "idleTimeout",
          "Reactor `timeout`", "reactorTimeout"));
      rows.add(async(n, "`streamTimeouts` (first item + idle), per call" + calls, "StreamTimeoutsAsyncBenchmark",
          "call", "firstItemAndIdle", "Reactor `timeout`", "reactorTimeout"));
      rows.add(async(n, "deadline + retry + breaker + per-call timeout" + calls, "PipelineAsyncBenchmark", "call",
          "breakwater", "Resilience4j TimeLimiter + CircuitBreaker + Retry", "resilience4j"));
      rows.add(async(n, "deadline + retry + breaker + per-call timeout, chain built per call" + calls,
          "PipelinePerCallAsyncBenchmark", "call", "breakwater", "Resilience4j TimeLimiter + CircuitBreaker + Retry",
          "resilience4j"));
    }
    return List.copyOf(rows);
  }

  /** A row of an asynchronous benchmark: its variants are {@code method[inFlight=n][variant=v]}. */
  private static Overhead async(String inFlight, String label, String cls, String method, String ours,
      String peerLabel, String peer) {
    return new Overhead(label, cls, asyncVariant(method, inFlight, "baseline"), asyncVariant(method, inFlight, ours),
        peerLabel, asyncVariant(method, inFlight, peer));
  }

  static String asyncVariant(String method, String inFlight, String variant) {
    return method + "[inFlight=" + inFlight + "][variant=" + variant + "]";
  }

  private static double over(Result r, Result base, boolean bytes) {
    return Math.max(0, bytes ? r.bytesPerOp() - base.bytesPerOp() : r.score() - base.score());
  }

  /** A target from shared/PERFORMANCE.md, computed from the results. */
  record Target(String id, String measure, String goal, String figure, Boolean met) {}

  private static final Pattern HEAP_LINE = Pattern.compile(
      "P8: (\\d+) B of heap per stream with timers, (\\d+) B without: Breakwater's share (-?\\d+) B");

  private final Map<String, Map<String, Result>> byClass = new TreeMap<>();
  private JsonNode first;
  private String redisTable;
  private long[] heap;   // with timers, without, Breakwater's share: bytes per stream
  /** Calls per second → share of requests that were retries, in a 10-minute full outage. */
  private final Map<Integer, String> retryShares = new TreeMap<>();

  private static final Pattern RETRY_SHARE_LINE = Pattern.compile(
      "10-minute outage at (\\d+) calls/s: ([0-9.]+) % of requests are retries");

  public static void main(String[] args) throws IOException {
    if (args.length < 3 || args.length % 2 == 0) {
      System.err.println("usage: BenchmarkReport <jmh.json> <out.md> <out.svg> [--redis <RedisThroughput's table>]"
          + " [--heap <TenThousandStreamsTest's P8 line>] [--retry-share <RetryBudgetsTest's outage lines>]");
      System.exit(2);
    }
    BenchmarkReport report = new BenchmarkReport();
    report.read(Path.of(args[0]));
    for (int i = 3; i < args.length; i += 2) {
      Path file = Path.of(args[i + 1]);
      String text = Files.exists(file) ? Files.readString(file).strip() : "";
      switch (args[i]) {
        case "--redis" -> report.redisTable(text);
        case "--heap" -> report.heapLine(text);
        case "--retry-share" -> report.retryShareLines(text);
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + ": give --redis, --heap or --retry-share");
      }
    }
    Files.writeString(Path.of(args[1]), report.markdown(Path.of(args[2]).getFileName().toString()));
    Files.writeString(Path.of(args[2]), report.svg());
  }

  /** RedisThroughput's markdown table (P6); empty when Redis was not measured. */
  void redisTable(String table) {
    this.redisTable = table.isEmpty() ? null : table;
  }

  /** TenThousandStreamsTest's line {@code P8: <n> B of heap per stream with timers, <n> B without: ...}. */
  void heapLine(String line) {
    Matcher m = HEAP_LINE.matcher(line);
    this.heap = m.find() ? new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2)),
        Long.parseLong(m.group(3))} : null;
  }

  /**
   * RetryBudgetsTest's lines {@code RetryBudgetsTest: 10-minute outage at <rate> calls/s: <share> % of requests are
   * retries}; other lines are ignored.
   */
  void retryShareLines(String text) {
    Matcher m = RETRY_SHARE_LINE.matcher(text);
    while (m.find()) {
      retryShares.put(Integer.parseInt(m.group(1)), m.group(2));
    }
  }

  void read(Path json) throws IOException {
    JsonNode root = new ObjectMapper().readTree(json.toFile());
    for (JsonNode run : root) {
      if (first == null) {
        first = run;
      }
      String benchmark = run.get("benchmark").asText();
      int dot = benchmark.lastIndexOf('.');
      String className = benchmark.substring(benchmark.lastIndexOf('.', dot - 1) + 1, dot);
      StringBuilder variant = new StringBuilder(benchmark.substring(dot + 1));
      JsonNode params = run.get("params");
      if (params != null) {
        params.fields().forEachRemaining(p -> variant.append('[').append(p.getKey()).append('=')
            .append(p.getValue().asText()).append(']'));
      }
      JsonNode primary = run.get("primaryMetric");
      double bytes = Double.NaN;
      JsonNode secondary = run.get("secondaryMetrics");
      if (secondary != null) {
        for (var it = secondary.fields(); it.hasNext(); ) {
          var metric = it.next();
          if (metric.getKey().endsWith("gc.alloc.rate.norm")) {
            bytes = metric.getValue().get("score").asDouble();
          }
        }
      }
      byClass.computeIfAbsent(className, c -> new LinkedHashMap<>()).put(variant.toString(),
          new Result(className, variant.toString(), fastest(primary),
              primary.get("scoreError").asDouble(), primary.get("scoreUnit").asText(), bytes,
              run.get("threads").asInt()));
    }
  }

  /**
   * The fastest measurement iteration. On a small shared machine, other processes and late JIT compilation only ever
   * make an iteration slower (a stream benchmark of 1 M elements per invocation may still be interpreted in its first
   * iterations), so the fastest one is the closest to the code's steady-state cost.
   */
  private static double fastest(JsonNode primary) {
    double best = Double.MAX_VALUE;
    for (JsonNode fork : primary.path("rawData")) {
      for (JsonNode iteration : fork) {
        best = Math.min(best, iteration.asDouble());
      }
    }
    return best == Double.MAX_VALUE ? primary.get("score").asDouble() : best;
  }

  private Result get(String className, String variant) {
    Map<String, Result> results = byClass.get(className);
    return results == null ? null : results.get(variant);
  }

  /** (ours − base) / (peer − base) for a metric: time when {@code bytes} is false, allocation when true. */
  private Double overheadRatio(String cls, String base, String ours, String peer, boolean bytes) {
    Result b = get(cls, base);
    Result o = get(cls, ours);
    Result p = get(cls, peer);
    if (b == null || o == null || p == null) {
      return null;
    }
    double baseValue = bytes ? b.bytesPerOp() : b.score();
    double oursValue = bytes ? o.bytesPerOp() : o.score();
    double peerValue = bytes ? p.bytesPerOp() : p.score();
    return Math.max(0, oursValue - baseValue) / Math.max(1e-9, peerValue - baseValue);
  }

  private Double scoreRatio(String cls, String numerator, String denominator) {
    Result n = get(cls, numerator);
    Result d = get(cls, denominator);
    return n == null || d == null ? null : n.score() / d.score();
  }

  /**
   * The targets of shared/PERFORMANCE.md, each computed from this run's results, or "not in this run" when its
   * benchmark did not run (a target without a benchmark yet says so plainly). A new benchmark for a target wires its
   * variants here.
   */
  List<Target> targets() {
    List<Target> targets = new ArrayList<>(asynchronousTargets());
    for (String threads : List.of("oneThread", "twoThreads")) {
      Double r = overheadRatio("GuardedByBenchmark", threads + "[variant=baseline]", threads + "[variant=breakwater]",
          threads + "[variant=resilience4j]", false);
      targets.add(target("P1", "`guardedBy` overhead / Resilience4j `CircuitBreakerOperator`'s, "
          + (threads.equals("oneThread") ? "1 thread" : "2 threads"), "≤ 0.5", r, r != null && r <= 0.5));
    }
    Double p2 = overheadRatio("RetrySuccessBenchmark", "baseline", "breakwaterRetryWithBudget",
        "resilience4jRetryOperator", false);
    targets.add(target("P2", "`retryWithBudget` success overhead / Resilience4j `RetryOperator`'s", "≤ 0.3", p2,
        p2 != null && p2 <= 0.3));
    Double p3 = overheadRatio("PipelineBenchmark", "baseline", "breakwater", "resilience4j", false);
    targets.add(target("P3", "deadline + retry + breaker + per-call timeout / Resilience4j TimeLimiter + "
        + "CircuitBreaker + Retry, time overhead", "≤ 0.2", p3, p3 != null && p3 <= 0.2));
    Double p4 = scoreRatio("IdleTimeoutBenchmark", "idleTimeout", "bare");
    targets.add(target("P4", "`idleTimeout`, default mode, on 1 M elements / the bare stream", "≤ 15×", p4,
        p4 != null && p4 <= 15));
    Double p4peer = scoreRatio("IdleTimeoutBenchmark", "idleTimeout", "reactorFluxTimeout");
    targets.add(target("P4", "`idleTimeout`, default mode, on 1 M elements / Reactor `Flux.timeout`", "≤ 0.05",
        p4peer, p4peer != null && p4peer <= 0.05));
    Double p4coarse = scoreRatio("IdleTimeoutBenchmark", "idleTimeoutCoarse", "bare");
    targets.add(target("P4", "`idleTimeout`, coarse mode, on 1 M elements / the bare stream", "≤ 3×", p4coarse,
        p4coarse != null && p4coarse <= 3));
    Double p5 = scoreRatio("SseDecodeBenchmark", "spring", "breakwater");
    targets.add(target("P5", "SSE decode throughput / Spring's `ServerSentEventHttpMessageReader`", "≥ 2×", p5,
        p5 != null && p5 >= 2));
    Double hit = redisRatio("hit");
    Double miss = redisRatio("miss");
    targets.add(new Target("P6", "Redis `idempotentBy` throughput / `redis-benchmark` SET, concurrency 32",
        "hit ≥ 0.6×, miss ≥ 0.3×",
        hit == null || miss == null ? "not in this run" : "hit " + format(hit) + ", miss " + format(miss),
        hit == null || miss == null ? null : hit >= 0.6 && miss >= 0.3));
    targets.add(new Target("P8", "Breakwater's heap per stream, 10 000 streams with idle timers, bytes", "≤ 2048",
        heap == null ? "not in this run" : String.valueOf(heap[2]), heap == null ? null : heap[2] <= 2048));
    Double p9 = overheadRatio("PipelineBenchmark", "baseline", "breakwater", "resilience4j", true);
    targets.add(target("P9", "allocation of the composed happy path / Resilience4j's stack", "≤ 0.5", p9,
        p9 != null && p9 <= 0.5));
    for (String[] limit : List.of(new String[] {"breakwaterLimitedBy", "resilience4jBulkhead", "`limitedBy(fixed)`",
        "`BulkheadOperator`"}, new String[] {"breakwaterThrottledBy", "resilience4jRateLimiter", "in-memory `throttledBy`",
        "`RateLimiterOperator`"})) {
      Double r = overheadRatio("LimitBenchmark", "thousandInFlight[variant=baseline]",
          "thousandInFlight[variant=" + limit[0] + "]", "thousandInFlight[variant=" + limit[1] + "]", false);
      targets.add(target("P10", "asynchronous calls, 1 000 in flight: " + limit[2] + " overhead / Resilience4j "
          + limit[3] + "'s", "≤ 0.5", r, r != null && r <= 0.5));
    }
    Double p11 = overheadRatio("HedgeBenchmark", asyncVariant("call", "1000", "baseline"),
        asyncVariant("call", "1000", "hedgedBy"), asyncVariant("call", "1000", "withDeadline"), false);
    targets.add(target("P11", "asynchronous calls, 1 000 in flight, answered before the hedge delay: `hedgedBy` "
        + "overhead / `withDeadline`'s", "≤ 1.5", p11, p11 != null && p11 <= 1.5));
    Double p12 = scoreRatio("LlmAssembleBenchmark", "assemble", "decode");
    targets.add(target("P12", "assembling an LLM response / decoding the same stream", "≤ 2×", p12,
        p12 != null && p12 <= 2));
    return targets;
  }

  /**
   * The targets measured on asynchronous calls, 10 000 in flight (per thread), as PERFORMANCE.md defines them: P1,
   * P3, P3b and P9 (P2 on asynchronous calls is in the overhead table).
   */
  List<Target> asynchronousTargets() {
    String n = "10000";
    List<Target> targets = new ArrayList<>();
    for (String threads : List.of("oneThread", "twoThreads")) {
      Double r = overheadRatio("GuardedByAsyncBenchmark", asyncVariant(threads, n, "baseline"),
          asyncVariant(threads, n, "breakwater"), asyncVariant(threads, n, "resilience4j"), false);
      targets.add(target("P1", "asynchronous calls, 10 000 in flight: `guardedBy` overhead / Resilience4j "
          + "`CircuitBreakerOperator`'s, " + (threads.equals("oneThread") ? "1 thread" : "2 threads"), "≤ 0.5", r,
          r != null && r <= 0.5));
    }
    String base = asyncVariant("call", n, "baseline");
    for (String each : IN_FLIGHT_PER_CALL) {
      Double p3 = perCallRatio(each, false);
      targets.add(target("P3", "asynchronous calls, " + inFlight(each) + ", chain built per call as users write "
          + "it: deadline + retry + breaker + per-call timeout / Resilience4j TimeLimiter + CircuitBreaker + Retry, "
          + "time overhead", "≤ 0.2", p3, p3 != null && p3 <= 0.2));
    }
    Double p3 = overheadRatio("PipelineAsyncBenchmark", base, asyncVariant("call", n, "breakwater"),
        asyncVariant("call", n, "resilience4j"), false);
    targets.add(target("P3", "asynchronous calls, 10 000 in flight: deadline + retry + breaker + per-call timeout / "
        + "Resilience4j TimeLimiter + CircuitBreaker + Retry, time overhead", "≤ 0.2", p3, p3 != null && p3 <= 0.2));
    Result bare = get("DeadlineAsyncBenchmark", base);
    Result deadline = get("DeadlineAsyncBenchmark", asyncVariant("call", n, "deadline"));
    Double p3b = bare == null || deadline == null ? null : over(deadline, bare, false);
    targets.add(target("P3b", "asynchronous calls, 10 000 in flight: `withDeadline`'s arm + cancel, ns per call "
        + "over the bare call", "≤ 100", p3b, p3b != null && p3b <= 100));
    for (String each : IN_FLIGHT_PER_CALL) {
      Double p9 = perCallRatio(each, true);
      targets.add(target("P9", "asynchronous calls, " + inFlight(each) + ", chain built per call as users write "
          + "it: allocation of the composed happy path / Resilience4j's stack", "≤ 0.5", p9, p9 != null && p9 <= 0.5));
    }
    Double p9 = overheadRatio("PipelineAsyncBenchmark", base, asyncVariant("call", n, "breakwater"),
        asyncVariant("call", n, "resilience4j"), true);
    targets.add(target("P9", "asynchronous calls, 10 000 in flight: allocation of the composed happy path / "
        + "Resilience4j's stack", "≤ 0.5", p9, p9 != null && p9 <= 0.5));
    return targets;
  }

  /** P3 ({@code bytes} false) or P9 of the chain built per call ({@code PipelinePerCallAsyncBenchmark}). */
  private Double perCallRatio(String inFlight, boolean bytes) {
    return overheadRatio("PipelinePerCallAsyncBenchmark", asyncVariant("call", inFlight, "baseline"),
        asyncVariant("call", inFlight, "breakwater"), asyncVariant("call", inFlight, "resilience4j"), bytes);
  }

  private static String inFlight(String n) {
    return (n.length() > 3 ? n.substring(0, n.length() - 3) + " " + n.substring(n.length() - 3) : n) + " in flight";
  }

  /** A target of PERFORMANCE.md that no benchmark measures yet: the report says so rather than leave it out. */
  private static Target noBenchmarkYet(String id, String measure, String goal) {
    return new Target(id, measure, goal, "no benchmark yet", null);
  }

  /** The ratio to SET in RedisThroughput's row for hits or misses, if that table was given. */
  Double redisRatio(String row) {
    if (redisTable == null) {
      return null;
    }
    Matcher m = Pattern.compile("\\| idempotentBy " + row + "[^|]*\\| [0-9.]+ \\| ([0-9.]+) \\|").matcher(redisTable);
    return m.find() ? Double.parseDouble(m.group(1)) : null;
  }

  private static Target target(String id, String measure, String goal, Double value, boolean met) {
    return new Target(id, measure, goal, value == null ? "not in this run" : format(value),
        value == null ? null : met);
  }

  String markdown(String svgName) {
    StringBuilder md = new StringBuilder();
    md.append("# Benchmarks\n\n");
    md.append("Generated by `benchmarks/run-report.sh` from one JMH run; every ratio compares figures of that same "
        + "run. Scores are the **fastest** measurement iteration (± is JMH's error of the mean, shown to say how noisy "
        + "the run was): on a shared 2-core machine, noise and late JIT only slow iterations down. Overhead = score − "
        + "the baseline (no operator) of the same benchmark class; an overhead within the noise of its baseline shows "
        + "as 0.\n\n");
    md.append("Other pages quote these tables, never figures of their own: `DocFiguresTest` fails the build when a "
        + "page gives a benchmark figure that is not a row of this page, and `run-report.sh` refreshes the quotes.\n\n");
    if (first != null) {
      md.append("- JDK: ").append(first.path("jdkVersion").asText()).append(", ").append(first.path("vmName")
          .asText()).append('\n');
      md.append("- JMH: ").append(first.path("forks").asText()).append(" fork, ")
          .append(first.path("warmupIterations").asText()).append(" × ").append(first.path("warmupTime").asText())
          .append(" warm-up, ").append(first.path("measurementIterations").asText()).append(" × ")
          .append(first.path("measurementTime").asText()).append(" measurement, `-prof gc`\n");
    }
    md.append("- Machine: ").append(machine()).append('\n');
    md.append("- Load average when the report was written (1, 5, 15 min): ").append(loadAverage())
        .append(" — other processes share the cores, and the fastest iteration is what they disturb least\n\n");

    md.append("## Targets (shared/PERFORMANCE.md)\n\nThe target rows come first and are measured on asynchronous "
        + "calls (a call that answers after subscription): their measure says *asynchronous calls*. The P1, P3 and P9 "
        + "rows after them, whose measure does not, are the synchronous-source rows (secondary: `Mono.fromSupplier`, "
        + "where no timer is armed), kept under their earlier names so that pages quoting them still find them.\n\n");
    List<String> targetRows = new ArrayList<>();
    for (Target t : targets()) {
      targetRows.add(row(t.id(), t.measure(), t.goal(), t.figure(),
          t.met() == null ? "—" : t.met() ? "met" : "**missed**"));
    }
    table(md, "targets", 2, row("#", "measure", "target", "this run", ""), targetRows);
    md.append("\nMeasured outside JMH: **P7** (shared breaker, 0 Redis commands per call) by "
        + "`RedisBreakerStateStoreIT`; **P8** by `TenThousandStreamsTest` in the same run of `run-report.sh` (below).\n");
    clockReads(md);

    md.append("\n## Redis (P6)\n\n");
    if (redisTable == null) {
      md.append("Not measured in this run: `redis-server` and `redis-benchmark` were not on the PATH.\n");
    } else {
      md.append("`io.breakwater.benchmarks.redis.RedisThroughput 32 200000`, in the same run: a `redis-server` on "
          + "loopback, `redis-benchmark -t set -c 32`, then idempotent calls through one Redisson client at the same "
          + "concurrency (a miss claims and completes a new key: 2 round trips; a hit finds it done: 1), after a "
          + "warm-up that lasts until the JIT is done, and as the ceiling the same client, settings and concurrency "
          + "without Breakwater (a `GET`, and the `EVALSHA` a hit sends). The table's heading says where the clients "
          + "and `redis-server` ran (pinned to separate cores, or sharing both); see "
          + "[redis.md](redis.md#throughput-p6).\n\n");
      int cost = redisTable.indexOf("| per operation");
      md.append("<!-- figures: redis key=1 -->\n").append((cost < 0 ? redisTable : redisTable.substring(0, cost)).strip())
          .append('\n');
      if (cost >= 0) {
        md.append("\nWhat each operation cost, figures that do not depend on how busy the machine was (CPU time, "
            + "context switches and allocation over the run, divided by its operations; commands from "
            + "`INFO commandstats`, a script's own commands counted beside its `EVALSHA`):\n\n")
            .append("<!-- figures: redis-cost key=1 -->\n").append(redisTable.substring(cost).strip()).append('\n');
      }
    }

    md.append("\n## Heap per stream (P8)\n\n");
    if (heap == null) {
      md.append("Not measured in this run.\n");
    } else {
      md.append("`TenThousandStreamsTest` (core), in the same run: 10 000 concurrent streams that never emit, on a "
          + "2-thread scheduler, with and without `streamTimeouts` (first-item and idle timers); heap after GC, per "
          + "stream.\n\n");
      table(md, "heap-per-stream", 1, row("10 000 streams", "heap per stream, bytes"), List.of(
          row("with progress timers", String.valueOf(heap[0])),
          row("without (the bare streams)", String.valueOf(heap[1])),
          row("Breakwater's share", String.valueOf(heap[2]))));
    }

    md.append("\n## Retries in a full outage (issue 17)\n\n");
    if (retryShares.isEmpty()) {
      md.append("Not measured in this run.\n");
    } else {
      md.append("`RetryBudgetsTest` (core), in the same run of `run-report.sh`, in virtual time: every call fails for "
          + "10 minutes and asks for up to 3 retries, through `retryWithBudget` with the default budget "
          + "(`RetryBudget.ofDefaults()`); the share of all requests that were retries. Target: under 15 % at every "
          + "rate; see [retry.md](retry.md#the-default-dependency-budget).\n\n");
      List<String> rows = new ArrayList<>();
      retryShares.forEach((rate, share) -> rows.add(row(rate + (rate == 1 ? " call/s" : " calls/s"), share + " %")));
      table(md, "retry-share", 1, row("full outage, 10 minutes", "retries, share of all requests"), rows);
    }

    md.append("\n## Overhead per operator\n\nScore − the no-operator baseline of the same class, in time and "
        + "allocation; the ratio is Breakwater's overhead over the peer's (lower is better, below 1 Breakwater is "
        + "cheaper).\n\n### Asynchronous calls (the target rows)\n\nEach call answers after its subscription "
        + "(`AsyncCalls`: one operation answers the oldest pending call and subscribes a new one), with 1 and with 10 000 "
        + "calls in flight, so every timeout arms a real timer and cancels it, and every breaker times a real call. The "
        + "targets of PERFORMANCE.md are measured on these rows.\n\n");
    overheadTable(md, "overhead-async", ASYNC_OVERHEADS);
    md.append("\n### Synchronous source (secondary rows)\n\n`Mono.fromSupplier` subscribed directly: the call ends "
        + "during its subscription, so a deadline or a per-call timeout arms no timer at all and a breaker reads no "
        + "clock. These rows flatter every timed operator; they are kept to catch regressions on cached and in-memory "
        + "calls.\n\n");
    overheadTable(md, "overhead", OVERHEADS);
    md.append("\nThe idle timeout's row is per element of a 1 M-element stream; the SSE row is per decoded event, "
        + "Spring's `ServerSentEventHttpMessageReader` being the peer; idempotency rows are in memory (the Redis "
        + "figures are above).\n");
    md.append("\n![Overheads](").append(svgName).append(")\n\n## All results\n");
    for (var entry : byClass.entrySet()) {
      md.append("\n### ").append(entry.getKey()).append(entry.getKey().contains("Async") ? " (asynchronous)" : "")
          .append("\n\n");
      List<String> rows = new ArrayList<>();
      for (Result r : entry.getValue().values()) {
        rows.add(row(r.variant(), String.valueOf(r.threads()), format(r.score()), format(r.error()), r.unit(),
            Double.isNaN(r.bytesPerOp()) ? "—" : format(r.bytesPerOp())));
      }
      table(md, "results-" + kebab(entry.getKey()), 1, row("variant", "threads", "score", "±", "unit", "B/op"), rows);
    }
    return md.toString();
  }

  /**
   * What the clock costs the rows that read it on every call, from {@code ClockReadBenchmark} in this run: one read of
   * the rate limit's clock against Resilience4j's whole {@code RateLimiterOperator} overhead (the floor of an exact
   * in-memory {@code throttledBy}), two reads of the breaker's clock against its {@code CircuitBreakerOperator}'s (the
   * floor of a timed asynchronous {@code guardedBy}).
   */
  private void clockReads(StringBuilder md) {
    md.append("\n### Clock reads\n\nThe floor of P10's in-memory `throttledBy`, of P1's asynchronous `guardedBy` and of "
        + "P4's exact `idleTimeout`. ");
    Result limitRead = get("ClockReadBenchmark", "limitNow");
    Result breakerRead = get("ClockReadBenchmark", "breakerNow");
    Result nanoTime = get("ClockReadBenchmark", "nanoTime");
    Result streamRead = get("ClockReadBenchmark", "heldParallelNowNanos");
    if (limitRead == null || breakerRead == null || nanoTime == null) {
      md.append("Not measured in this run (`ClockReadBenchmark`).\n");
      return;
    }
    md.append("`ClockReadBenchmark`, in the same run: a read of the default clock (`Schedulers.parallel()`, whose "
        + "`now(..)` is Reactor's default, `System.currentTimeMillis()` converted) through the operators' own "
        + "`Supplier<Scheduler>`. An exact in-memory `throttledBy` reads it once per call (to refill the bucket at "
        + "the instant it takes from it), a timed asynchronous `guardedBy` twice (its subscription and its first "
        + "element), an exact `idleTimeout` once per element (the instant its idle time runs from, read through the "
        + "scheduler it holds): those reads alone, set against the peer's whole overhead, are the lowest ratio the "
        + "exact designs can reach. P4 compares whole scores per element: against `Flux.timeout` the floor is the "
        + "read over `Flux.timeout`'s score, against the bare stream it is the bare score plus the read, over the "
        + "bare score; where that floor is above the target, only the opt-in coarse mode, which reads no clock per "
        + "element, can meet it. "
        + "Resilience4j's operators read `System.nanoTime()` as often. Beyond its clock read, the in-memory "
        + "`throttledBy` spends one atomic increment per call (about 4–5 ns, measured by removing it): the count of "
        + "calls admitted since a provider's `remaining` header, which rebases that header to what the limit has "
        + "already let through; it cannot be folded into the level's compare-and-set, whose one 64-bit word holds "
        + "the level as a double and is reset when a take overflows the bucket.\n\n");
    Double rateLimiter = peerOverhead("LimitBenchmark", "thousandInFlight[variant=baseline]",
        "thousandInFlight[variant=resilience4jRateLimiter]");
    Double breaker = peerOverhead("GuardedByAsyncBenchmark", asyncVariant("oneThread", "10000", "baseline"),
        asyncVariant("oneThread", "10000", "resilience4j"));
    Result fluxTimeout = get("IdleTimeoutBenchmark", "reactorFluxTimeout");
    Result bareStream = get("IdleTimeoutBenchmark", "bare");
    List<String> rows = new ArrayList<>(List.of(
        row("in-memory `throttledBy`, the limit's clock (P10)", "1", format(limitRead.score()),
            rateLimiter == null ? "not in this run" : format(limitRead.score() / rateLimiter),
            format(nanoTime.score())),
        row("timed asynchronous `guardedBy`, the breaker's clock (P1, 1 thread)", "2", format(breakerRead.score()),
            breaker == null ? "not in this run" : format(2 * breakerRead.score() / breaker),
            format(nanoTime.score()))));
    if (streamRead != null) {
      rows.add(row("exact `idleTimeout`, the stream's clock (P4 against `Flux.timeout`), per element", "1",
          format(streamRead.score()), fluxTimeout == null ? "not in this run"
              : format(streamRead.score() / fluxTimeout.score()), format(nanoTime.score())));
      rows.add(row("exact `idleTimeout`, the stream's clock (P4 against the bare stream), per element", "1",
          format(streamRead.score()), bareStream == null ? "not in this run"
              : format((bareStream.score() + streamRead.score()) / bareStream.score()), format(nanoTime.score())));
    }
    table(md, "clock-reads", 1, row("operator, clock", "reads per call", "ns per read", "reads / the peer's overhead",
        "`System.nanoTime()`, ns"), rows);
  }

  /** The peer's overhead over the baseline, in ns, or null when either did not run. */
  private Double peerOverhead(String cls, String base, String peer) {
    Result b = get(cls, base);
    Result p = get(cls, peer);
    return b == null || p == null ? null : Math.max(1e-9, p.score() - b.score());
  }

  /** One overhead table, named for quoting: Breakwater's overhead and its peer's, per row of {@code overheads}. */
  private void overheadTable(StringBuilder md, String name, List<Overhead> overheads) {
    List<String> overheadRows = new ArrayList<>();
    for (Overhead o : overheads) {
      Result b = get(o.cls(), o.base());
      Result ours = get(o.cls(), o.ours());
      Result peer = o.peer() == null ? null : get(o.cls(), o.peer());
      if (b == null || ours == null) {
        continue;
      }
      overheadRows.add(row(o.label(), o.peer() == null ? "—" : o.peerLabel(), format(over(ours, b, false)),
          format(over(ours, b, true)), peer == null ? "—" : format(over(peer, b, false)),
          peer == null ? "—" : format(over(peer, b, true)),
          peer == null ? "—" : format(over(ours, b, false) / Math.max(1e-9, over(peer, b, false))),
          peer == null ? "—" : format(over(ours, b, true) / Math.max(1e-9, over(peer, b, true)))));
    }
    table(md, name, 2, row("operator", "peer", "Breakwater ns/op", "B/op", "peer ns/op", "B/op",
        "ratio, time", "ratio, allocation"), overheadRows);
  }

  /** A table named for quoting: its marker, header, separator and rows; rows are known by their first key cells. */
  private static void table(StringBuilder md, String name, int keyColumns, String header, List<String> rows) {
    md.append("<!-- figures: ").append(name).append(" key=").append(keyColumns).append(" -->\n").append(header)
        .append('\n').append("|---".repeat((int) header.chars().filter(c -> c == '|').count() - 1)).append("|\n");
    rows.forEach(r -> md.append(r).append('\n'));
  }

  private static String row(String... cells) {
    return "| " + String.join(" | ", cells) + " |";
  }

  /** {@code GuardedByBenchmark} as {@code guarded-by-benchmark}. */
  static String kebab(String className) {
    return className.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
  }

  /** Horizontal bars: overhead in ns/op over the baseline, Breakwater against each peer. */
  String svg() {
    List<Bar> bars = new ArrayList<>();
    String base = asyncVariant("call", "10000", "baseline");
    addBars(bars, "GuardedByAsyncBenchmark", asyncVariant("oneThread", "10000", "baseline"), "breaker, async",
        asyncVariant("oneThread", "10000", "breakwater"), asyncVariant("oneThread", "10000", "resilience4j"),
        "Resilience4j CB, async");
    addBars(bars, "PipelineAsyncBenchmark", base, "composed, async", asyncVariant("call", "10000", "breakwater"),
        asyncVariant("call", "10000", "resilience4j"), "Resilience4j stack, async");
    addBars(bars, "DeadlineAsyncBenchmark", base, "deadline, async", asyncVariant("call", "10000", "deadline"),
        asyncVariant("call", "10000", "reactorTimeout"), "Reactor timeout, async");
    addBars(bars, "GuardedByBenchmark", "oneThread[variant=baseline]", "breaker",
        "oneThread[variant=breakwater]", "oneThread[variant=resilience4j]", "Resilience4j CB");
    addBars(bars, "RetrySuccessBenchmark", "baseline", "retry", "breakwaterRetryWithBudget",
        "resilience4jRetryOperator", "Resilience4j Retry");
    addBarsPeer(bars, "RetrySuccessBenchmark", "baseline", "reactorRetryWhenBackoff", "Reactor retryWhen");
    addBars(bars, "PipelineBenchmark", "baseline", "composed", "breakwater", "resilience4j", "Resilience4j stack");
    addBars(bars, "DeadlineBenchmark", "baseline", "deadline", "deadline", "reactorTimeout", "Reactor timeout");
    double max = bars.stream().mapToDouble(b -> b.value()).max().orElse(1);
    int width = 760;
    int barHeight = 22;
    int left = 220;
    StringBuilder svg = new StringBuilder();
    svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(width).append("\" height=\"")
        .append(40 + bars.size() * (barHeight + 6)).append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
    svg.append("<text x=\"10\" y=\"20\" font-size=\"14\">Overhead over no operator, ns/op, log scale (shorter is better); "
        + "async: 10 000 calls in flight, the others on a synchronous source</text>\n");
    int y = 34;
    for (Bar bar : bars) {
      int length = (int) Math.round((width - left - 80) * Math.log10(1 + bar.value()) / Math.log10(1 + max));
      svg.append("<text x=\"10\" y=\"").append(y + 15).append("\">").append(escape(bar.label())).append("</text>\n");
      svg.append("<rect x=\"").append(left).append("\" y=\"").append(y).append("\" width=\"")
          .append(Math.max(1, length)).append("\" height=\"").append(barHeight).append("\" fill=\"")
          .append(bar.ours() ? "#1f77b4" : "#bbbbbb").append("\"/>\n");
      svg.append("<text x=\"").append(left + Math.max(1, length) + 6).append("\" y=\"").append(y + 15).append("\">")
          .append(format(bar.value())).append("</text>\n");
      y += barHeight + 6;
    }
    return svg.append("</svg>\n").toString();
  }

  private void addBars(List<Bar> bars, String cls, String base, String label, String ours, String peer,
      String peerLabel) {
    addOne(bars, cls, base, "Breakwater " + label, ours, true);
    addOne(bars, cls, base, peerLabel, peer, false);
  }

  private void addBarsPeer(List<Bar> bars, String cls, String base, String peer, String peerLabel) {
    addOne(bars, cls, base, peerLabel, peer, false);
  }

  private void addOne(List<Bar> bars, String cls, String base, String label, String variant, boolean ours) {
    Result b = get(cls, base);
    Result r = get(cls, variant);
    if (b != null && r != null) {
      bars.add(new Bar(label, Math.max(0, r.score() - b.score()), ours));
    }
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;");
  }

  /** Whole numbers from 100, two decimals below, two significant digits below 0.01 (a ratio of 0.0026 is not 0). */
  private static String format(double value) {
    if (Double.isNaN(value)) {
      return "—";
    }
    double abs = Math.abs(value);
    return abs >= 100 ? String.format(Locale.ROOT, "%.0f", value)
        : abs >= 0.01 || abs == 0 ? String.format(Locale.ROOT, "%.2f", value)
        : String.format(Locale.ROOT, "%.2g", value);
  }

  private static String loadAverage() {
    try {
      String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return fields[0] + ", " + fields[1] + ", " + fields[2];
    } catch (IOException | RuntimeException e) {
      return "unknown (no /proc/loadavg)";
    }
  }

  private static String machine() {
    String cpu = "unknown CPU";
    try {
      cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
          .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse(cpu);
    } catch (IOException ignored) {
      // not Linux: keep the default
    }
    return Runtime.getRuntime().availableProcessors() + " cores, " + cpu + ", "
        + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB max heap of the report JVM";
  }
}
