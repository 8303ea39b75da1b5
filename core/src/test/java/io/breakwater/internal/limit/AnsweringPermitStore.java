package io.breakwater.internal.limit;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Permits whose {@code tryAcquire} the test answers, when and on the thread it chooses: each request waits in
 * {@link #pending} until the test emits its permit's id (added to {@link #held}) or completes it empty. A release
 * removes the permit from {@link #held}. Counts the requests in flight at once.
 */
final class AnsweringPermitStore implements PermitStore {

  final ConcurrentLinkedQueue<Sinks.One<String>> pending = new ConcurrentLinkedQueue<>();
  final Set<String> held = ConcurrentHashMap.newKeySet();
  private final AtomicInteger asking = new AtomicInteger();
  final AtomicInteger mostAskingAtOnce = new AtomicInteger();
  private final AtomicInteger ids = new AtomicInteger();

  /** Answers the oldest request with a new permit; returns its id. */
  String grantOldest() {
    String id = "p" + ids.incrementAndGet();
    held.add(id);
    Sinks.One<String> answer = pending.poll();
    if (answer == null) {
      throw new AssertionError("no request for a permit is waiting");
    }
    answer.tryEmitValue(id);
    return id;
  }

  @Override
  public Mono<Void> limit(int permits) {
    return Mono.empty();
  }

  @Override
  public Mono<String> tryAcquire(Duration lease) {
    return Mono.defer(() -> {
      Sinks.One<String> answer = Sinks.one();
      mostAskingAtOnce.accumulateAndGet(asking.incrementAndGet(), Math::max);
      pending.add(answer);
      // counted out before the answer travels on: the limit may ask again while handling it
      return answer.asMono().doOnSuccess(id -> asking.decrementAndGet()).doOnError(e -> asking.decrementAndGet())
          .doOnCancel(asking::decrementAndGet);
    });
  }

  @Override
  public Mono<Void> release(String id) {
    return Mono.fromRunnable(() -> held.remove(id));
  }

  @Override
  public Mono<Boolean> renew(String id, Duration lease) {
    return Mono.just(held.contains(id));
  }

  @Override
  public String toString() {
    return "answering store";
  }
}
