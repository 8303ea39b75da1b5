package io.breakwater.internal.limit;

import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * Where a shared concurrency limit keeps its permits, e.g. a Redis semaphore whose permits expire. Every operation is
 * one atomic step on the store.
 */
public interface PermitStore {

  /** Sets how many permits there are in all; called before the first {@link #tryAcquire}. */
  Mono<Void> limit(int permits);

  /** Takes one permit leased for {@code lease}: emits its id (never empty), or completes empty when none is free. */
  Mono<String> tryAcquire(Duration lease);

  /** Gives a permit back; a permit whose lease already ran out is not an error. */
  Mono<Void> release(String id);

  /** Extends a held permit's lease to {@code lease} from now: whether it was still held. */
  Mono<Boolean> renew(String id, Duration lease);

  /** What the store is, for messages: {@code "Redis semaphore bw:limit:{search}"}. */
  @Override
  String toString();
}
