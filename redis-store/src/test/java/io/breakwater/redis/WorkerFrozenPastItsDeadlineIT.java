package io.breakwater.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.redis.testing.RedisProcess;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 in every build, the small form of {@link FaultsAcrossProcessesIT}'s frozen worker: 2 {@link FaultWorker}
 * processes, 32 calls in flight each, call the same keys through {@code idempotentBy} on a real {@code redis-server} (AOF {@code appendfsync
 * always}), each call under a 5 s deadline with a 30 s lease, and a side effect that does not check
 * {@code stillOwner()} (its answer is fetched from its dependency, a round trip, 200 ms after the write). When 30 % of the keys have run, worker w0 is frozen ({@code SIGSTOP}) for 7 s with calls in
 * flight. On waking it still owns its keys, so its side effects run, and their deadlines, long past, cancel the calls
 * before their answers: each such key is kept as of unknown outcome instead of being freed, and the other worker,
 * meeting it, does not run it again.
 */
class WorkerFrozenPastItsDeadlineIT {

  private static final int KEYS = 400;
  private static final long LEASE = 30_000;
  /** The answer is fetched this long after the write: most calls in flight have sent theirs. */
  private static final long ANSWER = 200;
  /** Calls in flight per worker: each one frozen after its write is a key that the old release let run twice. */
  private static final int IN_FLIGHT = 32;

  @Test
  void aWorkerFrozenPastItsDeadlineRunsNoKeyTwice() throws Exception {
    try (FaultRun r = new FaultRun(KEYS)) {
      RedisProcess redis = FaultRun.aofServer();
      r.servers.add(redis);
      r.startWorkers(2, redis.address(), LEASE, false, 0, ANSWER, IN_FLIGHT);
      r.awaitShare(0.3);
      r.freeze(r.workers.get(0), 7_000);
      r.awaitWorkers(1, TimeUnit.MINUTES);
      Map<Integer, List<String>> twice = r.report("worker SIGSTOP 7 s, deadline 5 s, lease 30 s", 1);
      assertThat(twice).as("keys run twice, with the workers that ran them: see %s", r.dir).isEmpty();
    }
  }
}
