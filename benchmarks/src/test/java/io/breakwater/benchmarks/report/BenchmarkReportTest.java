package io.breakwater.benchmarks.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report from a small JMH result file written by hand: tables named for quoting, targets as PERFORMANCE.md. */
class BenchmarkReportTest {

  @TempDir
  Path dir;

  private final BenchmarkReport report = new BenchmarkReport();

  private static String run(String benchmark, String params, double fastest, double bytes) {
    return """
        {"jmhVersion":"1.37","benchmark":"io.breakwater.benchmarks.%s","mode":"avgt","threads":1,"forks":1,
         "jdkVersion":"17.0.15","vmName":"OpenJDK 64-Bit Server VM","warmupIterations":3,"warmupTime":"1 s",
         "measurementIterations":5,"measurementTime":"1 s",%s
         "primaryMetric":{"score":%s,"scoreError":1.0,"scoreUnit":"ns/op","rawData":[[%s,%s]]},
         "secondaryMetrics":{"·gc.alloc.rate.norm":{"score":%s}}}
        """.formatted(benchmark, params, fastest * 1.1, fastest * 1.2, fastest, bytes);
  }

  @BeforeEach
  void read() throws IOException {
    String json = "[" + String.join(",",
        run("breaker.GuardedByBenchmark.oneThread", "\"params\":{\"variant\":\"baseline\"},", 10, 48),
        run("breaker.GuardedByBenchmark.oneThread", "\"params\":{\"variant\":\"breakwater\"},", 60, 112),
        run("breaker.GuardedByBenchmark.oneThread", "\"params\":{\"variant\":\"resilience4j\"},", 120, 128),
        run("stream.IdleTimeoutBenchmark.bare", "", 2, 16),
        run("stream.IdleTimeoutBenchmark.idleTimeout", "", 20, 16),
        run("stream.IdleTimeoutBenchmark.reactorFluxTimeout", "", 1000, 230)) + "]";
    Path file = Files.writeString(dir.resolve("jmh.json"), json);
    report.read(file);
  }

  @Test
  void everyTableIsNamedForQuotingWithItsKeyColumns() {
    report.heapLine("P8: 323 B of heap per stream with timers, 58 B without: Breakwater's share 265 B");
    String md = report.markdown("benchmarks.svg");

    List<String> lines = md.lines().toList();
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("|") && (i == 0 || !lines.get(i - 1).startsWith("|"))) {
        assertThat(lines.get(i - 1)).as("the line above the table at line " + (i + 1))
            .matches("<!-- figures: [a-z0-9]+(-[a-z0-9]+)* key=[1-9] -->");
      }
    }
    assertThat(md).contains("<!-- figures: targets key=2 -->", "<!-- figures: overhead key=2 -->",
        "<!-- figures: heap-per-stream key=1 -->", "<!-- figures: results-guarded-by-benchmark key=1 -->",
        "<!-- figures: results-idle-timeout-benchmark key=1 -->");
  }

  @Test
  void theRetrySharesOfRetryBudgetsTestBecomeATableByRate() {
    report.retryShareLines(String.join("\n",
        "RetryBudgetsTest: 10-minute outage at 20 calls/s: 13.1 % of requests are retries",
        "[main] INFO something else",
        "RetryBudgetsTest: 10-minute outage at 1 calls/s: 14.2 % of requests are retries",
        "RetryBudgetsTest: 10-minute outage at 200 calls/s: 13.0 % of requests are retries"));
    String md = report.markdown("benchmarks.svg");

    assertThat(md).contains("<!-- figures: retry-share key=1 -->\n"
        + "| full outage, 10 minutes | retries, share of all requests |\n|---|---|\n"
        + "| 1 call/s | 14.2 % |\n| 20 calls/s | 13.1 % |\n| 200 calls/s | 13.0 % |\n");
  }

  @Test
  void withoutRetryShareLinesTheRetrySectionSaysSo() {
    String md = report.markdown("benchmarks.svg");

    assertThat(md).contains("## Retries in a full outage (issue 17)\n\nNot measured in this run.");
  }

  @Test
  void theTargetsAreThoseOfPerformanceMdComputedFromTheRun() {
    report.heapLine("P8: 323 B of heap per stream with timers, 58 B without: Breakwater's share 265 B");
    String md = report.markdown("benchmarks.svg");

    // (60 − 10) / (120 − 10)
    assertThat(md).contains("| P1 | `guardedBy` overhead / Resilience4j `CircuitBreakerOperator`'s, 1 thread | ≤ 0.5 "
        + "| 0.45 | met |");
    // 20 / 2 and 20 / 1000
    assertThat(md).contains("| P4 | `idleTimeout`, default mode, on 1 M elements / the bare stream | ≤ 15× | 10.00 "
        + "| met |");
    assertThat(md).contains("| P4 | `idleTimeout`, default mode, on 1 M elements / Reactor `Flux.timeout` | ≤ 0.05 "
        + "| 0.02 | met |");
    assertThat(md).contains("| P8 | Breakwater's heap per stream, 10 000 streams with idle timers, bytes | ≤ 2048 "
        + "| 265 | met |");
    assertThat(md).contains("| P2 | `retryWithBudget` success overhead / Resilience4j `RetryOperator`'s | ≤ 0.3 "
        + "| not in this run | — |");
    assertThat(md).contains("| P12 | assembling an LLM response / decoding the same stream | ≤ 2× "
        + "| not in this run | — |");
    assertThat(md).contains("| P11 | asynchronous calls, 1 000 in flight, answered before the hedge delay: "
        + "`hedgedBy` overhead / `withDeadline`'s | ≤ 1.5 | not in this run | — |");
    assertThat(md).doesNotContain("no benchmark yet");
    Matcher ids = Pattern.compile("(?m)^\\| (P\\d+b?) \\|").matcher(md);
    List<String> found = ids.results().map(r -> r.group(1)).distinct().toList();
    // the targets measured on asynchronous calls lead; then the rest in PERFORMANCE.md's order
    assertThat(found).containsExactly("P1", "P3", "P3b", "P9", "P2", "P4", "P5", "P6", "P8", "P10", "P11", "P12");
  }

  @Test
  void withoutTheHeapLineP8IsNotInThisRun() {
    report.heapLine("something else");
    assertThat(report.markdown("benchmarks.svg")).contains("| P8 | Breakwater's heap per stream, 10 000 streams with "
        + "idle timers, bytes | ≤ 2048 | not in this run | — |").contains("## Heap per stream (P8)\n\nNot measured");
  }

  @Test
  void theClockReadsAreSetAgainstThePeersWholeOverheadOfTheSameRun() throws IOException {
    String json = "[" + String.join(",",
        run("ClockReadBenchmark.limitNow", "", 30, 0),
        run("ClockReadBenchmark.breakerNow", "", 31, 0),
        run("ClockReadBenchmark.nanoTime", "", 29, 0),
        run("ClockReadBenchmark.heldParallelNowNanos", "", 28, 0),
        run("stream.IdleTimeoutBenchmark.reactorFluxTimeout", "", 560, 0),
        run("stream.IdleTimeoutBenchmark.bare", "", 2, 0),
        run("limit.LimitBenchmark.thousandInFlight", "\"params\":{\"variant\":\"baseline\"},", 100, 112),
        run("limit.LimitBenchmark.thousandInFlight", "\"params\":{\"variant\":\"resilience4jRateLimiter\"},", 200,
            224)) + "]";
    BenchmarkReport withClock = new BenchmarkReport();
    withClock.read(Files.writeString(dir.resolve("clock.json"), json));
    String md = withClock.markdown("benchmarks.svg");

    // 30 / (200 − 100); the breaker's peer did not run; 28 / Flux.timeout's whole score per element, 560; the bare
    // stream's 2 ns plus the read, over 2 ns: the floor of P4's ratio to the bare stream
    assertThat(md).contains("<!-- figures: clock-reads key=1 -->",
        "| in-memory `throttledBy`, the limit's clock (P10) | 1 | 30.00 | 0.30 | 29.00 |",
        "| timed asynchronous `guardedBy`, the breaker's clock (P1, 1 thread) | 2 | 31.00 | not in this run | 29.00 |",
        "| exact `idleTimeout`, the stream's clock (P4 against `Flux.timeout`), per element | 1 | 28.00 | 0.05 | 29.00 |",
        "| exact `idleTimeout`, the stream's clock (P4 against the bare stream), per element | 1 | 28.00 | 15.00 | 29.00 |");
    assertThat(report.markdown("benchmarks.svg")).as("a run without ClockReadBenchmark")
        .contains("Not measured in this run (`ClockReadBenchmark`).");
  }

  @Test
  void theChainBuiltPerCallIsATargetRowOfP3AndP9AtEachNumberOfCallsInFlight() throws IOException {
    List<String> runs = new ArrayList<>();
    for (String n : List.of("1", "10000")) {
      double slower = "1".equals(n) ? 1 : 2;
      runs.add(run("pipeline.PipelinePerCallAsyncBenchmark.call",
          "\"params\":{\"inFlight\":\"" + n + "\",\"variant\":\"baseline\"},", 10 * slower, 24));
      runs.add(run("pipeline.PipelinePerCallAsyncBenchmark.call",
          "\"params\":{\"inFlight\":\"" + n + "\",\"variant\":\"breakwater\"},", 210 * slower, 824));
      runs.add(run("pipeline.PipelinePerCallAsyncBenchmark.call",
          "\"params\":{\"inFlight\":\"" + n + "\",\"variant\":\"resilience4j\"},", 2010 * slower, 2024));
    }
    BenchmarkReport perCall = new BenchmarkReport();
    perCall.read(Files.writeString(dir.resolve("per-call.json"), "[" + String.join(",", runs) + "]"));
    String md = perCall.markdown("benchmarks.svg");

    // (210 − 10) / (2010 − 10) at 1 in flight, the same doubled at 10 000; (824 − 24) / (2024 − 24) for both
    for (String n : List.of("1", "10 000")) {
      assertThat(md).contains("| P3 | asynchronous calls, " + n + " in flight, chain built per call as users write "
          + "it: deadline + retry + breaker + per-call timeout / Resilience4j TimeLimiter + CircuitBreaker + Retry, "
          + "time overhead | ≤ 0.2 | 0.10 | met |");
      assertThat(md).contains("| P9 | asynchronous calls, " + n + " in flight, chain built per call as users write "
          + "it: allocation of the composed happy path / Resilience4j's stack | ≤ 0.5 | 0.40 | met |");
    }
    assertThat(md).contains("| deadline + retry + breaker + per-call timeout, chain built per call, 1 call in flight "
        + "| Resilience4j TimeLimiter + CircuitBreaker + Retry |");
    assertThat(md).contains("### PipelinePerCallAsyncBenchmark (asynchronous)");
  }

  @Test
  void classNamesBecomeTableNames() {
    assertThat(BenchmarkReport.kebab("GuardedByBenchmark")).isEqualTo("guarded-by-benchmark");
    assertThat(BenchmarkReport.kebab("SseDecodeBenchmark")).isEqualTo("sse-decode-benchmark");
  }
}
