package io.breakwater.idempotency;

import java.time.Duration;
import reactor.core.publisher.Mono;

/** Passes every operation to another store; tests override the operations whose behaviour they change. */
public class DelegatingStore implements IdempotencyStore {

  /** A 32-byte key secret for tests whose stores are not the in-memory one. */
  public static final byte[] SECRET = "a 32-byte secret for these tests!".getBytes(
      java.nio.charset.StandardCharsets.US_ASCII);

  private final IdempotencyStore delegate;

  public DelegatingStore(IdempotencyStore delegate) {
    this.delegate = delegate;
  }

  @Override
  public Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease) {
    return delegate.claim(key, fingerprint, owner, lease);
  }

  @Override
  public Mono<Boolean> complete(String key, String owner, Outcome outcome, Duration ttl) {
    return delegate.complete(key, owner, outcome, ttl);
  }

  @Override
  public Mono<Boolean> release(String key, String owner) {
    return delegate.release(key, owner);
  }

  @Override
  public Mono<Boolean> renew(String key, String owner, Duration lease) {
    return delegate.renew(key, owner, lease);
  }

  @Override
  public Mono<Void> changed(String key) {
    return delegate.changed(key);
  }
}
