package io.breakwater.hedge;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.publisher.PublisherProbe;

/**
 * A dependency whose n-th call (0-based, counted across every subscription) behaves as {@code script} says; each
 * call is wrapped in a {@link PublisherProbe} so that tests can see which attempts were cancelled, and the virtual
 * time at which each started is kept.
 */
final class ScriptedDependency {

  final AtomicInteger calls = new AtomicInteger();
  final List<PublisherProbe<String>> probes = new CopyOnWriteArrayList<>();
  final List<Long> startedAtMillis = new CopyOnWriteArrayList<>();
  private final IntFunction<Mono<String>> script;

  ScriptedDependency(IntFunction<Mono<String>> script) {
    this.script = script;
  }

  /** Calls answer in turn after {@code delays} (the last one repeats), with "a0", "a1", …. */
  static ScriptedDependency answering(Duration... delays) {
    return new ScriptedDependency(n -> answer("a" + n, delays[Math.min(n, delays.length - 1)]));
  }

  static Mono<String> answer(String value, Duration after) {
    return Mono.delay(after).thenReturn(value);
  }

  static Mono<String> failure(Throwable error, Duration after) {
    return Mono.delay(after).then(Mono.error(error));
  }

  Mono<String> call() {
    return Mono.defer(() -> {
      int n = calls.getAndIncrement();
      startedAtMillis.add(Schedulers.parallel().now(TimeUnit.MILLISECONDS));
      PublisherProbe<String> probe = PublisherProbe.of(script.apply(n));
      probes.add(probe);
      return probe.mono();
    });
  }

  PublisherProbe<String> probe(int n) {
    return probes.get(n);
  }
}
