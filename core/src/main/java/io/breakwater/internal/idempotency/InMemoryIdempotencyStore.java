package io.breakwater.internal.idempotency;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.internal.Saturating;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * Claims and outcomes in a Caffeine cache whose clock is the scheduler's, so leases and TTLs expire in virtual time
 * in tests. Each operation is one atomic {@code compute} on the key. Records are weighed by their bytes (Caffeine's
 * {@code maximumWeight}), so a few large results cannot hold more memory than the bound. Waiters of a key are
 * registered only while its record is in flight, and woken and forgotten when it completes, is released, or leaves
 * the cache for any reason.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {

  /**
   * In flight until {@code expiresAt}, or done until {@code expiresAt}. An in-flight entry is retained past its lease
   * (until {@code retainUntil}), so that the next claim can tell that it takes over from an owner that never finished.
   */
  private record Entry(String fingerprint, String owner, @Nullable Outcome outcome, long expiresAt, long retainUntil) {

    static Entry claimed(String fingerprint, String owner, long now, Duration lease) {
      long leaseNanos = saturatedNanos(lease);
      long expiresAt = saturatedAdd(now, leaseNanos);
      return new Entry(fingerprint, owner, null, expiresAt, saturatedAdd(expiresAt, leaseNanos));
    }

    static Entry done(String fingerprint, String owner, Outcome outcome, long now, Duration ttl) {
      long expiresAt = saturatedAdd(now, saturatedNanos(ttl));
      return new Entry(fingerprint, owner, outcome, expiresAt, expiresAt);
    }

    boolean inFlight() {
      return outcome == null;
    }

    /** Bytes held: the strings (2 bytes a char, as the JVM may keep them) and a fixed overhead for the objects. */
    int weigh(String key) {
      long chars = key.length() + fingerprint.length() + owner.length();
      if (outcome != null) {
        chars += length(outcome.resultJson()) + length(outcome.failureMessage());
      }
      return (int) Math.min(Integer.MAX_VALUE, ENTRY_OVERHEAD_BYTES + 2 * chars);
    }

    private static long length(@Nullable String text) {
      return text == null ? 0 : text.length();
    }
  }

  /**
   * The objects around a record's strings: the cache node, the entry, the outcome and five string headers with their
   * arrays, about 300 bytes on a 64-bit JVM with compressed pointers.
   */
  static final int ENTRY_OVERHEAD_BYTES = 300;

  /** The smallest bound accepted: below it, the bound is probably a count of keys given where bytes are asked. */
  static final long MIN_BYTES = 1L << 20;

  private static long saturatedNanos(Duration duration) {
    if (duration.isNegative()) {
      return 0;
    }
    return Saturating.nanos(duration);
  }

  private static long remaining(long until, long now) {
    long left = until - now;
    boolean overflow = ((until ^ now) & (until ^ left)) < 0;
    return overflow ? (until > now ? Long.MAX_VALUE : 0L) : Math.max(0L, left);
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }

  private final Supplier<Scheduler> scheduler;
  private final Cache<String, Entry> entries;
  private final ConcurrentMap<String, Sinks.Empty<Void>> waiters = new ConcurrentHashMap<>();
  private final KeyedHashes keyedHashes;

  public InMemoryIdempotencyStore(long maxBytes, Supplier<Scheduler> scheduler) {
    if (maxBytes < MIN_BYTES) {
      throw new IllegalArgumentException("maxBytes is " + maxBytes + ": the in-memory store is bounded by the bytes "
          + "its records hold (about 400 B for a small result); give at least 1 MiB (" + MIN_BYTES + ")");
    }
    this.scheduler = scheduler;
    byte[] secret = new byte[32];
    new SecureRandom().nextBytes(secret);
    this.keyedHashes = new KeyedHashes(secret);
    this.entries = Caffeine.newBuilder()
        .maximumWeight(maxBytes)
        .<String, Entry>weigher((key, entry) -> entry.weigh(key))
        .removalListener((@Nullable String key, @Nullable Entry entry, RemovalCause cause) -> {
          if (cause.wasEvicted() && key != null) {   // key is null only for weak keys, which this cache has not
            signal(key);      // expired or evicted: its waiters would otherwise wait for a change that never comes
          }
        })
        .ticker(this::now)
        .executor(Runnable::run)
        .expireAfter(new Expiry<String, Entry>() {
          @Override
          public long expireAfterCreate(String key, Entry entry, long now) {
            return remaining(entry.retainUntil, now);
          }

          @Override
          public long expireAfterUpdate(String key, Entry entry, long now, long currentDuration) {
            return remaining(entry.retainUntil, now);
          }

          @Override
          public long expireAfterRead(String key, Entry entry, long now, long currentDuration) {
            return currentDuration;
          }
        })
        .build();
  }

  /** The random secret of this store's keys: records never leave the process, so no one else needs it. */
  public KeyedHashes keyedHashes() {
    return keyedHashes;
  }

  /** Keys that have waiters registered (for tests of the waiters' lifecycle). */
  int waitingKeys() {
    return waiters.size();
  }

  /** The bytes the records weigh together (for tests of the bound). */
  long weightedBytes() {
    return entries.policy().eviction().orElseThrow().weightedSize().orElseThrow();
  }

  /** Runs Caffeine's pending maintenance, expiring what is due (for tests). */
  void cleanUp() {
    entries.cleanUp();
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
        Outcome outcome = current.outcome;   // null exactly when current.inFlight()
        if (outcome != null) {
          answer[0] = new Done(outcome);
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
        done[0] = !current.inFlight() && current.owner.equals(owner);   // a resend of a stored completion
        return current;
      });
      signal(key);
      return done[0];
    });
  }

  @Override
  public Mono<Boolean> renew(String key, String owner, Duration lease) {
    return Mono.fromSupplier(() -> {
      boolean[] renewed = new boolean[1];
      long now = now();
      entries.asMap().computeIfPresent(key, (k, current) -> {
        if (current.inFlight() && current.owner.equals(owner)) {
          renewed[0] = true;
          return Entry.claimed(current.fingerprint, owner, now, lease);
        }
        return current;
      });
      return renewed[0];
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
   * this call is never missed: either the record is already settled, or the change will signal the sink. When the
   * record is settled the registration is taken back at once (and any waiter that joined it is woken), so no entry is
   * left behind for a key that will never change again.
   */
  @Override
  public Mono<Void> changed(String key) {
    return Mono.defer(() -> {
      Sinks.Empty<Void> sink = waiters.computeIfAbsent(key, k -> Sinks.empty());
      Entry current = entries.getIfPresent(key);
      if (current == null || !current.inFlight() || current.expiresAt <= now()) {
        if (waiters.remove(key, sink)) {
          sink.tryEmitEmpty();
        }
        return Mono.empty();
      }
      return sink.asMono();
    });
  }

  private void signal(String key) {
    Sinks.Empty<Void> sink = waiters.remove(key);
    if (sink != null) {
      sink.tryEmitEmpty();
    }
  }
}
