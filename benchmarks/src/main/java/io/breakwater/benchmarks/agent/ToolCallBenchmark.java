package io.breakwater.benchmarks.agent;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withDeadline;
import static io.breakwater.Breakwater.withTaskBudget;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.benchmarks.BlackholeSubscriber;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import reactor.core.publisher.Mono;

/**
 * The cost of a {@code Tool.call} on the happy path, over a synchronous call: no operator; the same operators
 * composed by hand (deadline + retry + breaker + per-attempt timeout); a tool (adds adaptive timeout, meters, a JSON
 * event with an argument fingerprint); the same tool with events off (SLF4J at WARN, or no binding); a tool inside a
 * task budget (adds steps and budget summaries).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ToolCallBenchmark {

  private static final Map<String, String> ARGS = Map.of("city", "Lisbon", "date", "2026-12-04");

  private Mono<Integer> baseline;
  private Mono<Integer> composed;
  private Mono<Integer> tool;
  private Mono<Integer> toolInTask;
  private Mono<Integer> toolNoEvents;

  @Setup
  public void setUp() {
    baseline = Mono.fromSupplier(() -> 42);
    composed = baseline
        .transform(perCallTimeout())
        .transform(guardedBy(CircuitBreaker.ofDefaults("bench")))
        .transform(retryWithBudget(RetryPolicy.builder().name("bench").build()))
        .transform(withDeadline(Duration.ofSeconds(10)));
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.ofDefaults();
    Tool<Map<String, String>, Integer> t = Tool.of(ToolDescriptor.builder("weather.get")
            .sideEffect(SideEffect.READ_ONLY).timeouts(CallTimeouts.adaptiveDefaults()).breakers(breakers)
            .meterRegistry(new SimpleMeterRegistry()).eventLog(json -> { }).build(),
        (Map<String, String> args) -> baseline, Integer.class);
    tool = t.call(ARGS).transform(withDeadline(Duration.ofSeconds(10)));
    Tool<Map<String, String>, Integer> silent = Tool.of(ToolDescriptor.builder("weather.silent")
            .sideEffect(SideEffect.READ_ONLY).timeouts(CallTimeouts.adaptiveDefaults()).breakers(breakers)
            .meterRegistry(new SimpleMeterRegistry()).build(),   // SLF4J without a binding: events off
        (Map<String, String> args) -> baseline, Integer.class);
    toolNoEvents = silent.call(ARGS).transform(withDeadline(Duration.ofSeconds(10)));
    toolInTask = t.call(ARGS).transform(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(10)).retries(5)
        .maxSteps(Integer.MAX_VALUE).build()));
  }

  @Benchmark
  public void baseline(Blackhole bh) {
    baseline.subscribe(new BlackholeSubscriber<>(bh));
  }

  @Benchmark
  public void composed(Blackhole bh) {
    composed.subscribe(new BlackholeSubscriber<>(bh));
  }

  @Benchmark
  public void tool(Blackhole bh) {
    tool.subscribe(new BlackholeSubscriber<>(bh));
  }

  @Benchmark
  public void toolNoEvents(Blackhole bh) {
    toolNoEvents.subscribe(new BlackholeSubscriber<>(bh));
  }

  @Benchmark
  public void toolInTask(Blackhole bh) {
    toolInTask.subscribe(new BlackholeSubscriber<>(bh));
  }
}
