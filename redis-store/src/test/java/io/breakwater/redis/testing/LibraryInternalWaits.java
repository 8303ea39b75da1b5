package io.breakwater.redis.testing;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Waits inside Redisson and Netty that are not blocking calls of a reactive pipeline, and nothing else:
 *
 * <ul>
 *   <li>Redisson hands pub/sub messages and listeners to a thread pool from its Netty threads, and that pool's own
 *       threads count as non-blocking too. Handing over a task ({@code ThreadPoolExecutor.execute}) never waits for
 *       capacity, it only takes the queue's lock for an insert; an idle worker waiting for its next task
 *       ({@code ThreadPoolExecutor.getTask}) is not a blocking call of a pipeline. Both are allowed.</li>
 *   <li>Redisson registers every command's future in a list guarded by a {@code ReentrantLock}
 *       ({@code WrappedLock.execute}); under contention a thread parks for the few instructions of a list insert.
 *       That is a short critical section, not I/O, and it is Redisson's, not ours.</li>
 * </ul>
 *
 * Netty's own internal wait (its buffer allocator's) is allowed by core's test fixtures
 * ({@code io.breakwater.testing.NettyInternalWaits}), which every module's tests have. Everything else those threads do, and everything Breakwater does on them, is still checked.
 */
public final class LibraryInternalWaits implements BlockHoundIntegration {

  @Override
  public void applyTo(BlockHound.Builder builder) {
    builder.allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "getTask");
    builder.allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "execute");
    builder.allowBlockingCallsInside("org.redisson.misc.WrappedLock", "execute");
  }
}
