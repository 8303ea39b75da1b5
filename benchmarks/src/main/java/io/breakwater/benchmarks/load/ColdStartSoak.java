package io.breakwater.benchmarks.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.breaker.StateTransition;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmStreamClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.HttpResources;

/**
 * The cold-start soak of issue 37, with every setting at its default, in a cold JVM: a second JVM serves a tool
 * endpoint and an OpenAI-compatible stream on loopback ({@link LoadServer}) that answer 10 % of requests with a 503
 * and never answer 1 % of them; this JVM calls four tools of two families (one shared
 * {@link CircuitBreakerRegistry#ofDefaults()}, default adaptive timeouts, default retries, a default value as the
 * fallback) at a steady rate while LLM streams run through a default {@link LlmStreamClient}. It counts fallbacks and
 * breaker openings, and logs why calls failed second by second beside what starves the process: how late timers fire
 * on {@code Schedulers.parallel()} and on a Netty event loop, JIT compilation and GC time, and the load average.
 *
 * <pre>
 * mvn -B -q -pl benchmarks -am package -DskipTests
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.load.ColdStartSoak [seconds] [streams] [calls/s]
 * </pre>
 *
 * <p>Defaults: 60 s, 300 streams, 500 calls/s (the issue's soak). Prints the report as Markdown on stdout and exits 1
 * if a check failed. Wall-clock time is what it measures, so it reads {@code System.nanoTime()}.
 */
public final class ColdStartSoak {

  /** The server's faults for the soak: 10 % 503s, 1 % never answered. */
  static final String TOOL_SCRIPT = "latencyMs=5;failPct=10;stallPct=1";
  static final String STREAM_SCRIPT = "tokens=50;gapMs=20;failPct=10;firstStallPct=1";
  static final List<String> TOOLS = List.of("search.web", "search.news", "mail.read", "mail.list");
  private static final Duration LIMIT = Duration.ofMinutes(3);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What one soak measured. */
  public record Result(long calls, long fallbacks, long opens, Report report, String seconds) {
    /** The issue's done-when: at most 1 % fallbacks and no breaker opening. */
    public boolean passed() {
      return fallbacks * 100 <= calls && opens == 0;
    }
  }

  private final long startNanos = System.nanoTime();
  private final Map<String, LongAdder> totals = new ConcurrentHashMap<>();
  private final Map<Integer, Map<String, LongAdder>> bySecond = new ConcurrentHashMap<>();
  private final List<String> transitions = Collections.synchronizedList(new ArrayList<>());
  private final AtomicLongArray parallelLag;
  private final AtomicLongArray loopLag;

  private ColdStartSoak(int seconds) {
    this.parallelLag = new AtomicLongArray(seconds + 120);
    this.loopLag = new AtomicLongArray(seconds + 120);
  }

  public static void main(String[] args) throws Exception {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
    int streams = args.length > 1 ? Integer.parseInt(args[1]) : 300;
    int rate = args.length > 2 ? Integer.parseInt(args[2]) : 500;
    Result result = run(Duration.ofSeconds(seconds), streams, rate);
    System.out.println(result.report().markdown("Cold-start soak, " + seconds + " s, " + streams + " streams + "
        + rate + " tool calls/s, " + Runtime.getRuntime().availableProcessors() + " cores, JDK "
        + Runtime.version()));
    System.out.println(result.seconds());
    System.exit(result.passed() ? 0 : 1);
  }

  /** Runs the soak against a fresh server JVM. */
  public static Result run(Duration soak, int streams, int rate) throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    Metrics.globalRegistry.add(meters);
    try (ServerProcess server = ServerProcess.start("1g")) {
      return new ColdStartSoak((int) soak.toSeconds()).soak(server, meters, soak, streams, rate);
    } finally {
      Metrics.globalRegistry.remove(meters);
    }
  }

  private Result soak(ServerProcess server, SimpleMeterRegistry meters, Duration soak, int streams, int rate)
      throws Exception {
    double loadBefore = loadAverage();
    Disposable probes = probes();
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.ofDefaults();
    List<Function<String, Mono<String>>> tools = new ArrayList<>();
    Disposable.Composite watched = Disposables.composite();
    ToolCalls http = new ToolCalls(server.baseUrl());
    for (String name : TOOLS) {
      tools.add(tool(name, breakers, http));
      watch(breakers.breaker(name), watched);
    }
    TOOLS.stream().map(breakers::family).flatMap(Optional::stream).distinct()
        .forEach(b -> watch(b, watched));
    LlmStreamClient client = LlmStreamClient.builder(server.baseUrl(), Dialect.OPENAI_CHAT)
        .header("X-Load", STREAM_SCRIPT).build();
    StreamCalls streamCalls = new StreamCalls(server.baseUrl(), Schedulers::parallel);
    CompletableFuture<List<StreamCalls.Outcome>> streamed =
        streamCalls.soak(client, streams, soak).collectList().toFuture();
    AtomicInteger next = new AtomicInteger();
    Function<String, Mono<String>> roundRobin =
        args -> tools.get(Math.floorMod(next.getAndIncrement(), tools.size())).apply(args);
    List<ToolCalls.Outcome> calls = ToolCalls.paced(roundRobin, rate, soak).collectList()
        .block(LIMIT.plus(soak));
    List<StreamCalls.Outcome> streamOutcomes = streamed.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
    double loadAfter = loadAverage();
    probes.dispose();
    watched.dispose();

    long fallbacks = calls.stream().filter(ToolCalls.Outcome::fallback).count();
    long opens = Math.round(meters.find("breakwater.breaker.transitions").tag("to", "open").counters().stream()
        .mapToDouble(Counter::count).sum());
    Report report = new Report();
    String load = streams + " streams + " + rate + " tool calls/s for " + soak.toSeconds() + " s, cold JVM, defaults, "
        + "server 10 % 503 + 1 % stalls";
    report.figure("cold-start soak", load, "load average (1 min) before / after",
        String.format(Locale.ROOT, "%.2f / %.2f", loadBefore, loadAfter));
    report.figure("cold-start soak", load, "tool calls that fell back", Report.percent(fallbacks, calls.size()));
    report.figure("cold-start soak", load, "tool call p50 / p99",
        Report.ms(StreamCalls.percentile(ToolCalls.took(calls), 50)) + " / "
            + Report.ms(StreamCalls.percentile(ToolCalls.took(calls), 99)));
    report.figure("cold-start soak", load, "breaker openings", opens + " " + transitions);
    report.figure("cold-start soak", load, "breaker outcomes", breakerOutcomes(meters));
    report.figure("cold-start soak", load, "attempt and call outcomes", new TreeMap<>(sums(totals)));
    report.figure("cold-start soak", load, "retries refused", counts(meters, "breakwater.retry.rejections",
        "reason"));
    report.figure("cold-start soak", load, "requests the server saw (stalled)", server.stats().requests("tool")
        + " (" + server.stats().requests("tool.stalled") + ")");
    report.figure("cold-start soak", load, "streams completed / errors",
        streamOutcomes.stream().filter(o -> o.error() == null).count() + " / " + StreamCalls.errors(streamOutcomes));
    report.check("cold start: fallbacks ≤ 1 % of tool calls, server failing 11 %",
        Report.percent(fallbacks, calls.size()), fallbacks * 100 <= calls.size());
    report.check("cold start: no breaker opens", opens + " opens", opens == 0);
    return new Result(calls.size(), fallbacks, opens, report, secondBySecond());
  }

  /** A tool as a newcomer builds it, sharing {@code breakers}; its attempts and call events are counted. */
  private Function<String, Mono<String>> tool(String name, CircuitBreakerRegistry breakers, ToolCalls http) {
    ToolDescriptor descriptor = ToolDescriptor.builder(name)
        .sideEffect(SideEffect.READ_ONLY)
        .breakers(breakers)
        .eventLog(this::event)
        .build();
    Tool<String, String> tool = Tool.of(descriptor, (String args) -> attempt(http.request(TOOL_SCRIPT)),
        String.class).withFallbacks(Fallbacks.<String, String>builder().orDefault(ToolCalls.FALLBACK).build());
    return tool::call;
  }

  private Mono<String> attempt(Mono<String> request) {
    return request
        .doOnSubscribe(s -> count("attempt"))
        .doOnSuccess(v -> count("attempt ok"))
        .doOnError(e -> count("attempt error " + StreamCalls.kind(e)))
        .doOnCancel(() -> count("attempt cancelled (timed out)"));
  }

  /** One call event: its result, and for a failure or a fallback its kind and timeout type. */
  private void event(String line) {
    try {
      JsonNode e = JSON.readTree(line);
      String result = e.path("result").asText();
      if ("success".equals(result)) {
        count("call success" + (e.path("attempts").asInt() > 1 ? " after retry" : ""));
        return;
      }
      count("call " + result + " " + e.path("failure_kind").asText() + ("null".equals(e.path("timeout_type").asText())
          || e.path("timeout_type").isNull() ? "" : " " + e.path("timeout_type").asText())
          + " (" + abbreviate(e.path("reason").asText()) + ")");
    } catch (IOException unreadable) {
      count("call event unreadable");
    }
  }

  private static String abbreviate(String reason) {
    String plain = reason.replaceAll("[0-9]+(\\.[0-9]+)?", "#");
    return plain.length() > 70 ? plain.substring(0, 70) + "…" : plain;
  }

  private void watch(CircuitBreaker breaker, Disposable.Composite watched) {
    watched.add(breaker.transitions().subscribe((StateTransition t) -> {
      transitions.add(String.format(Locale.ROOT, "%s %s→%s at %.1f s", t.breaker(), t.from(), t.to(), elapsed() / 1e9));
      count("transition " + t.breaker() + " " + t.from() + "→" + t.to());
    }));
  }

  private void count(String what) {
    totals.computeIfAbsent(what, k -> new LongAdder()).increment();
    int second = (int) (elapsed() / 1_000_000_000L);
    bySecond.computeIfAbsent(second, k -> new ConcurrentHashMap<>()).computeIfAbsent(what, k -> new LongAdder())
        .increment();
  }

  private long elapsed() {
    return System.nanoTime() - startNanos;
  }

  /**
   * Timers every 20 ms on {@code Schedulers.parallel()} and on one of the client's Netty event loops, noting the
   * largest lateness per second; JIT and GC time are read per second in {@link #secondBySecond()}.
   */
  private Disposable probes() {
    Disposable.Composite all = Disposables.composite();
    AtomicLong due = new AtomicLong(System.nanoTime() + 20_000_000L);
    all.add(Schedulers.parallel().schedulePeriodically(() -> late(parallelLag, due), 20, 20, TimeUnit.MILLISECONDS));
    EventLoop loop = HttpResources.get().onClient(true).next();
    AtomicLong loopDue = new AtomicLong(System.nanoTime() + 20_000_000L);
    var future = loop.scheduleAtFixedRate(() -> late(loopLag, loopDue), 20, 20, TimeUnit.MILLISECONDS);
    all.add(() -> future.cancel(false));
    all.add(Schedulers.parallel().schedulePeriodically(this::sampleVm, 0, 1, TimeUnit.SECONDS));
    return all;
  }

  private void late(AtomicLongArray lag, AtomicLong due) {
    long now = System.nanoTime();
    long lateness = Math.max(0, now - due.getAndAdd(20_000_000L));
    int second = (int) (elapsed() / 1_000_000_000L);
    if (second < lag.length()) {
      lag.accumulateAndGet(second, lateness, Math::max);
    }
  }

  private final Map<Integer, String> vm = new ConcurrentHashMap<>();
  private long lastJit;
  private long lastGc;

  private void sampleVm() {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    long jitMs = jit == null ? 0 : jit.getTotalCompilationTime();
    long gcMs = ManagementFactory.getGarbageCollectorMXBeans().stream()
        .mapToLong(GarbageCollectorMXBean::getCollectionTime).sum();
    int second = (int) (elapsed() / 1_000_000_000L);
    vm.put(second, String.format(Locale.ROOT, "jit %d ms, gc %d ms, load %.2f", jitMs - lastJit, gcMs - lastGc,
        loadAverage()));
    lastJit = jitMs;
    lastGc = gcMs;
  }

  /** Per second: the lag of each timer probe, JIT and GC time, and what the calls and attempts did. */
  private String secondBySecond() {
    StringBuilder out = new StringBuilder("Second by second (lag = the latest a 20 ms timer fired):\n\n");
    int last = bySecond.keySet().stream().mapToInt(Integer::intValue).max().orElse(0);
    for (int s = 0; s <= last; s++) {
      Map<String, LongAdder> counts = bySecond.getOrDefault(s, Map.of());
      out.append(String.format(Locale.ROOT, "%3d s  parallel lag %4d ms, event-loop lag %4d ms, %s: %s%n", s,
          s < parallelLag.length() ? parallelLag.get(s) / 1_000_000 : -1,
          s < loopLag.length() ? loopLag.get(s) / 1_000_000 : -1, vm.getOrDefault(s, "-"),
          new TreeMap<>(sums(counts))));
    }
    return out.toString();
  }

  private static Map<String, Long> sums(Map<String, LongAdder> counts) {
    Map<String, Long> sums = new TreeMap<>();
    counts.forEach((k, v) -> sums.put(k, v.sum()));
    return sums;
  }

  /** The counters named {@code name}, summed by their tag {@code tag}. */
  private static Map<String, Long> counts(SimpleMeterRegistry meters, String name, String tag) {
    Map<String, Long> out = new TreeMap<>();
    meters.find(name).counters().forEach(c -> out.merge(String.valueOf(c.getId().getTag(tag)),
        Math.round(c.count()), Long::sum));
    return out;
  }

  private static String breakerOutcomes(SimpleMeterRegistry meters) {
    Map<String, Long> out = new TreeMap<>();
    meters.find("breakwater.breaker.calls").meters().forEach(m -> {
      double count = m.measure().iterator().next().getValue();
      if (count > 0) {
        out.put(m.getId().getTag("breaker") + " " + m.getId().getTag("outcome"), Math.round(count));
      }
    });
    return out.toString();
  }

  /** The 1-minute load average: /proc/loadavg where there is one, else what the JVM reports. */
  static double loadAverage() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (IOException | RuntimeException unreadable) {
      return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }
  }
}
