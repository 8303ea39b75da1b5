package io.breakwater.redis.testing;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Redisson runs listeners on a thread pool whose threads Netty's BlockHound integration counts as non-blocking. An
 * idle worker of that pool waiting for its next task is not a blocking call in a reactive pipeline, so it is allowed;
 * everything those threads do while running a task is still checked.
 */
public final class IdleWorkersMayWait implements BlockHoundIntegration {

  @Override
  public void applyTo(BlockHound.Builder builder) {
    builder.allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "getTask");
  }
}
