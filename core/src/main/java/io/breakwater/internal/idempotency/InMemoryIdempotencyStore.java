package io.breakwater.internal.idempotency;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.breakwater.idempotency.IdempotencyStore;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * Claims and outcomes in a Caffeine cache whose clock is the scheduler's, so leases and TTLs expire in virtual time
 * in tests. Each operation is one atomic {@code compute} on the key.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {

  /**
   * In flight until {@code expiresAt}, or done until {@code expiresAt}. An in-flight entry is retained past its lease
   * (until {@code retainUntil}), so that the next claim can tell that it takes over from an owner that never finished.
   */
  private record Entry(String fingerprint, String owner, Outcome outcome, long expiresAt, long retainUntil) {

    static Entry claimed(String fingerprint, String owner, long now, Duration lease) {
      long leaseNanos = lease.toNanos();
      return new Entry(fingerprint, owner, null, now + leaseNanos, now + 2 * leaseNanos);
    }

    static Entry done(String fingerprint, String owner, Outcome outcome, long now, Duration ttl) {
      long expiresAt = now + ttl.toNanos();
      return new Entry(fingerprint, owner, outcome, expiresAt, expiresAt);
    }

    boolean inFlight() {
      return outcome == null;
    }
  }

  private final Supplier<Scheduler> scheduler;
  private final Cache<String, Entry> entries;
  private final ConcurrentMap<String, Sinks.Empty<Void>> waiters = new ConcurrentHashMap<>();

  public InMemoryIdempotencyStore(long maxKeys, Supplier<Scheduler> scheduler) {
    if (maxKeys < 1) {
      throw new IllegalArgumentException("maxKeys is " + maxKeys + ": give at least 1");
    }
    this.scheduler = scheduler;
    this.entries = Caffeine.newBuilder()
        .maximumSize(maxKeys)
        .ticker(this::now)
        .executor(Runnable::run)
        .expireAfter(new Expiry<String, Entry>() {
          @Override
          public long expireAfterCreate(String key, Entry entry, long now) {
            return Math.max(0L, entry.retainUntil - now);
          }

          @Override
          public long expireAfterUpdate(String key, Entry entry, long now, long currentDuration) {
            return Math.max(0L, entry.retainUntil - now);
          }

          @Override
          public long expireAfterRead(String key, Entry entry, long now, long currentDuration) {
            return currentDuration;
          }
        })
        .build();
  }

  private long now() {
    return scheduler.get().now(TimeUnit.NANOSECONDS);
  }

  @Override
  public Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease) {
    return Mono.fromSupplier(() -> {
      Claim[] answer = new Claim[1];
      long now = now();
      entries.asMap().compute(key, (k, current) -> {
        if (current != null && current.expiresAt <= now) {
          current = current.inFlight() ? current : null;
        }
        if (current == null) {
          answer[0] = new Acquired(false);
          return Entry.claimed(fingerprint, owner, now, lease);
        }
        if (!current.fingerprint.equals(fingerprint)) {
          answer[0] = new Mismatch(current.fingerprint);
          return current;
        }
        if (!current.inFlight()) {
          answer[0] = new Done(current.outcome);
          return current;
        }
        if (current.owner.equals(owner)) {
          answer[0] = new Acquired(false);
          return current;
        }
        if (current.expiresAt <= now) {
          answer[0] = new Acquired(true);
          return Entry.claimed(fingerprint, owner, now, lease);
        }
        answer[0] = new Busy(Duration.ofNanos(current.expiresAt - now));
        return current;
      });
      return answer[0];
    });
  }

  @Override
  public Mono<Boolean> complete(String key, String owner, Outcome outcome, Duration ttl) {
    return Mono.fromSupplier(() -> {
      boolean[] done = new boolean[1];
      long now = now();
      entries.asMap().computeIfPresent(key, (k, current) -> {
        if (current.inFlight() && current.owner.equals(owner)) {
          done[0] = true;
          return Entry.done(current.fingerprint, owner, outcome, now, ttl);
        }
        return current;
      });
      signal(key);
      return done[0];
    });
  }

  @Override
  public Mono<Boolean> release(String key, String owner) {
    return Mono.fromSupplier(() -> {
      boolean[] released = new boolean[1];
      entries.asMap().computeIfPresent(key, (k, current) -> {
        if (current.inFlight() && current.owner.equals(owner)) {
          released[0] = true;
          return null;
        }
        return current;
      });
      signal(key);
      return released[0];
    });
  }

  /**
   * Registers the waiter first and looks at the record second, so that a change between the waiter's last claim and
   * this call is never missed: either the record is already settled, or the change will signal the sink.
   */
  @Override
  public Mono<Void> changed(String key) {
    return Mono.defer(() -> {
      Mono<Void> signal = waiters.computeIfAbsent(key, k -> Sinks.empty()).asMono();
      Entry current = entries.getIfPresent(key);
      return current == null || !current.inFlight() || current.expiresAt <= now() ? Mono.empty() : signal;
    });
  }

  private void signal(String key) {
    Sinks.Empty<Void> sink = waiters.remove(key);
    if (sink != null) {
      sink.tryEmitEmpty();
    }
  }
}
