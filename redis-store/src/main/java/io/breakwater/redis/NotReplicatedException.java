package io.breakwater.redis;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;

/**
 * A write to Redis was applied by the primary but acknowledged by fewer replicas (or AOF fsyncs) than the store's
 * durability setting asks for, within its timeout: a failover could lose it. A claim that gets this fails closed;
 * a completion is retried. Kind {@link FailureKind#CONNECTION}.
 */
public final class NotReplicatedException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  public NotReplicatedException(int acknowledged, int required) {
    super("Redis acknowledged the write on " + acknowledged + " replicas of the " + required + " the store's "
        + "durability setting asks for: a failover could lose it");
  }

  @Override
  public String source() {
    return "redis";
  }

  @Override
  public FailureKind failureKind() {
    return FailureKind.CONNECTION;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
