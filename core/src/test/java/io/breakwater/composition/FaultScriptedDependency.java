package io.breakwater.composition;

import io.breakwater.composition.CompositionCase.Fault;
import io.breakwater.failure.HttpStatusException;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The dependency of the composition suite: its n-th attempt follows the n-th fault of the script (the last one
 * repeats). It records what a real dependency would see: every attempt (caller, key, instant), how many times each
 * key's write may have been done, and the attempts still open (subscribed, neither answered nor cancelled). Virtual
 * time only, on one thread: no synchronisation.
 */
final class FaultScriptedDependency {

  /** The Context key under which each caller's subscription carries its number. */
  static final String CALLER = "composition.caller";

  /** One attempt as the dependency saw it. */
  record Attempt(int caller, String key, long atMillis, Fault fault) {}

  private final List<Fault> script;
  private final Scheduler scheduler;
  private final List<Attempt> attempts = new ArrayList<>();
  private final Map<String, Integer> writes = new HashMap<>();
  private int open;

  FaultScriptedDependency(List<Fault> script, Scheduler scheduler) {
    this.script = script;
    this.scheduler = scheduler;
  }

  /** The call of caller {@code caller} for {@code key}, as a function that makes it would return it. */
  Mono<String> call(String key) {
    return Mono.deferContextual(ctx -> {
      Fault fault = script.get(Math.min(attempts.size(), script.size() - 1));
      attempts.add(new Attempt(ctx.get(CALLER), key, scheduler.now(java.util.concurrent.TimeUnit.MILLISECONDS),
          fault));
      if (fault.kind().mayHaveWritten()) {
        writes.merge(key, 1, Integer::sum);
      }
      open++;
      Mono<Long> latency = Mono.delay(Duration.ofMillis(fault.latencyMillis()), scheduler);
      Mono<String> answer = switch (fault.kind()) {
        case OK -> latency.thenReturn("done " + key);
        case STALL -> Mono.never();
        case SERVER_ERROR -> latency.then(Mono.error(new HttpStatusException(503)));
        case RATE_LIMITED -> latency.then(Mono.error(new HttpStatusException(429,
            Map.of("Retry-After", List.of(Long.toString(fault.retryAfterSeconds()))))));
        case RESET_AFTER_WRITE -> latency.then(Mono.error(new IOException("Connection reset by peer")));
        case CONNECT_REFUSED -> latency.then(Mono.error(new ConnectException("Connection refused")));
      };
      return answer.doFinally(signal -> open--);
    });
  }

  List<Attempt> attempts() {
    return attempts;
  }

  Map<String, Integer> writes() {
    return writes;
  }

  int open() {
    return open;
  }
}
