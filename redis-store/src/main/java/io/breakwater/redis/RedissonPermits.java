package io.breakwater.redis;

import io.breakwater.internal.Saturating;
import io.breakwater.internal.limit.PermitStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RPermitExpirableSemaphoreReactive;
import org.redisson.api.RedissonReactiveClient;
import reactor.core.publisher.Mono;

/** A {@link PermitStore} on Redisson's {@code RPermitExpirableSemaphore}: one Lua script per operation. */
final class RedissonPermits implements PermitStore {

  private final RPermitExpirableSemaphoreReactive semaphore;
  private final String key;

  RedissonPermits(RedissonReactiveClient redisson, String key) {
    this.semaphore = redisson.getPermitExpirableSemaphore(key);
    this.key = key;
  }

  @Override
  public Mono<Void> limit(int permits) {
    return semaphore.setPermits(permits);
  }

  @Override
  public Mono<String> tryAcquire(Duration lease) {
    return semaphore.tryAcquire(0, Saturating.millis(lease), TimeUnit.MILLISECONDS);
  }

  @Override
  public Mono<Void> release(String id) {
    return semaphore.tryRelease(id).then();
  }

  @Override
  public Mono<Boolean> renew(String id, Duration lease) {
    return semaphore.updateLeaseTime(id, Saturating.millis(lease), TimeUnit.MILLISECONDS);
  }

  @Override
  public String toString() {
    return "Redis semaphore " + key;
  }
}
