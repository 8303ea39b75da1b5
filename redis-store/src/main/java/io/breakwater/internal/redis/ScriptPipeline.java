package io.breakwater.internal.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.redisson.RedissonScript;
import org.redisson.api.BatchOptions;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;
import org.redisson.command.CommandAsyncExecutor;
import org.redisson.command.CommandBatchService;
import org.redisson.connection.ConnectionManager;
import org.redisson.connection.MasterSlaveEntry;
import reactor.core.scheduler.Schedulers;
import reactor.util.concurrent.Queues;

/**
 * Sends the scripts of concurrent calls to Redis together, as a group commit does: once {@value #MAX_IN_FLIGHT} sends
 * await their replies, the scripts that arrive go out with the next send, as one pipelined batch per master
 * (Redisson's {@link CommandBatchService}, not atomic: each script runs on its own, as if sent alone). A script that
 * finds fewer sends in flight goes out at once, alone: a lone call waits for nothing. Under load the client then
 * writes and reads many commands per system call instead of one, which is most of what a command costs a Java client
 * (see docs/redis.md).
 *
 * <p>Each script's reply is its own: one that fails ({@code NOSCRIPT}, a Lua error) fails its own caller only. That
 * is why a batch never spans masters: Redisson fails every unanswered command of a batch with the error of the first
 * of its masters to fail, so a {@code NOSCRIPT} on one master would reach a script of another that still runs, and
 * {@link LuaScript#run} would load it and send it again. A batch that fails as a whole (its connection lost, a
 * timeout) fails the scripts it has not answered with a {@link RedisException} saying their outcome is unknown: they
 * may have run, and neither Redisson nor this class sends them again (see {@link #OPTIONS}).
 *
 * <p>A send holds its place among those in flight until its reply, or for {@link #HOLD_NANOS} at most: a send to a
 * master that is paused, failing over or unreachable stops holding the scripts for the other masters back once that
 * time has passed, while its own scripts wait for their replies as before. One timer, on
 * {@code Schedulers.parallel()}, runs while scripts wait for a place.
 */
public final class ScriptPipeline {

  /** Sends (one script or a batch) awaiting their replies at a time. */
  static final int MAX_IN_FLIGHT = 4;
  /** The most scripts in one batch. */
  static final int MAX_BATCH = 128;
  /**
   * How long a send holds its place at most (20 ms): far beyond a healthy reply, which takes well under a millisecond
   * on a local network, and short beside Redisson's timeouts (seconds), which a dead node would otherwise impose on
   * every script queued behind its sends.
   */
  static final long HOLD_NANOS = 20_000_000L;

  /**
   * No retry of a batch by Redisson: it would send again the scripts of the batch that already got an error reply (a
   * {@code NOSCRIPT} that {@link LuaScript#run} loads and sends again itself: twice), and a {@code READONLY} after a
   * failover would reach the caller as a refusal while the retried script runs on the new master. Redirects
   * ({@code MOVED}, {@code ASK}) are still followed; a batch that times out fails its unanswered scripts as of unknown
   * outcome, and the store's callers retry.
   */
  private static final BatchOptions OPTIONS = BatchOptions.defaults().retryAttempts(0);

  private final CommandAsyncExecutor executor;
  private final RScript direct;
  private final Queue<Pending<?>> queue = Queues.<Pending<?>>unboundedMultiproducer().get();
  private final AtomicInteger wip = new AtomicInteger();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicLong sends = new AtomicLong();
  /** The sends holding a place, oldest first. */
  private final Queue<Send> holding = new ConcurrentLinkedQueue<>();
  /** Whether the timer that frees the places of sends held too long is armed. */
  private final AtomicBoolean watching = new AtomicBoolean();

  public ScriptPipeline(CommandAsyncExecutor executor) {
    this.executor = executor;
    this.direct = new RedissonScript(executor, StringCodec.INSTANCE);
  }

  /** How many sends (one script alone, or a batch) went out so far: for tests. */
  public long sends() {
    return sends.get();
  }

  /** The scripts API for commands sent alone (loading a script). */
  RScript direct() {
    return direct;
  }

  /** {@code EVALSHA} of {@code sha} on {@code key} alone, in read-write mode, with the next send. */
  <R> CompletableFuture<R> evalSha(String key, String sha, RScript.ReturnType type, Object[] args) {
    Pending<R> pending = new Pending<>(key, sha, type, args);
    queue.offer(pending);
    drain();
    return pending.reply;
  }

  private void drain() {
    if (wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      while (inFlight.get() < MAX_IN_FLIGHT) {
        Pending<?> first = pollWanted();
        if (first == null) {
          break;
        }
        Pending<?> second = pollWanted();
        try {
          if (second == null) {
            sendAlone(first);
          } else {
            sendBatches(first, second);
          }
        } catch (Throwable e) {
          // nothing here is meant to throw; if something does, the scripts taken fail and the loop goes on, so that
          // no script is left waiting behind a drain that never ends
          first.reply.completeExceptionally(e);
          if (second != null) {
            second.reply.completeExceptionally(e);
          }
        }
      }
      if (!queue.isEmpty()) {
        watch();
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }

  /**
   * The next waiting script whose caller still waits for it; the ones whose callers left (cancelled, timed out) are
   * dropped unsent: sent after its caller was told it failed, a claim would hold its key for a lease.
   */
  @Nullable
  private Pending<?> pollWanted() {
    Pending<?> p;
    while ((p = queue.poll()) != null && p.reply.isDone()) {
      // its caller left: never sent
    }
    return p;
  }

  /** A send takes a place among those in flight. */
  private Send hold() {
    sends.incrementAndGet();
    inFlight.incrementAndGet();
    Send send = new Send(Schedulers.parallel().now(TimeUnit.NANOSECONDS));
    holding.offer(send);
    return send;
  }

  /** Scripts wait for a place: in {@link #HOLD_NANOS}, the places of sends that hold them that long are freed. */
  private void watch() {
    if (!watching.compareAndSet(false, true)) {
      return;
    }
    try {
      Schedulers.parallel().schedule(this::freeHeldPlaces, HOLD_NANOS, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      watching.set(false);   // the scheduler is being disposed: places are freed by replies alone
    }
  }

  private void freeHeldPlaces() {
    watching.set(false);
    long now = Schedulers.parallel().now(TimeUnit.NANOSECONDS);
    for (Send send : holding) {
      if (now - send.at >= HOLD_NANOS) {
        send.free();
      }
    }
    drain();
  }

  private <R> void sendAlone(Pending<R> p) {
    Send send = hold();
    RFuture<R> reply;
    try {
      reply = direct.evalShaAsync(p.key, RScript.Mode.READ_WRITE, p.sha, p.type, List.of(p.key), p.args);
    } catch (Throwable e) {
      send.free();
      p.reply.completeExceptionally(e);
      return;
    }
    reply.whenComplete((value, error) -> {
      send.free();
      p.settle(value, error);   // the caller first: a call it starts takes the place this reply freed
      drain();
    });
  }

  /**
   * The waiting scripts, one batch per master: Redisson fails every unanswered command of a batch with the error of
   * the first of its masters to fail (CommandBatchService.executeAsync: {@code t.tryFailure(ex)} on all commands), so a
   * batch spanning masters would hand one script's NOSCRIPT or Lua error to the scripts of the other masters, which
   * still run (and, told NOSCRIPT, would be loaded and sent again by LuaScript.run: run twice).
   */
  private void sendBatches(Pending<?> first, Pending<?> second) {
    Map<Object, List<Pending<?>>> byMaster = new LinkedHashMap<>();
    byMaster.computeIfAbsent(master(first.key), m -> new ArrayList<>()).add(first);
    byMaster.computeIfAbsent(master(second.key), m -> new ArrayList<>()).add(second);
    int polled = 2;
    Pending<?> next;
    while (polled < MAX_BATCH && (next = pollWanted()) != null) {
      byMaster.computeIfAbsent(master(next.key), m -> new ArrayList<>()).add(next);
      polled++;
    }
    for (List<Pending<?>> scripts : byMaster.values()) {
      try {
        if (scripts.size() == 1) {
          sendAlone(scripts.get(0));
        } else {
          sendBatch(scripts);
        }
      } catch (Throwable e) {
        for (Pending<?> p : scripts) {
          p.reply.completeExceptionally(e);   // no effect on a script already answered
        }
      }
    }
  }

  /**
   * The master that serves {@code key} now; its slot when the topology does not know it yet, and a group of its own
   * (the script goes out alone) if even that cannot be told.
   */
  private Object master(String key) {
    try {
      ConnectionManager connections = executor.getConnectionManager();
      int slot = connections.calcSlot(executor.getServiceManager().getNameMapper().map(key));
      MasterSlaveEntry entry = connections.getWriteEntry(slot);
      return entry != null ? entry : slot;
    } catch (RuntimeException e) {
      return new Object();
    }
  }

  private void sendBatch(List<Pending<?>> scripts) {
    Send send = hold();
    List<Pending<?>> sent = new ArrayList<>();
    try {
      CommandBatchService batch = new CommandBatchService(executor, OPTIONS);
      RScript batchScripts = new RedissonScript(batch, StringCodec.INSTANCE);
      for (Pending<?> p : scripts) {
        add(batchScripts, p, sent);
      }
      batch.executeAsync().whenComplete((result, error) -> {
        send.free();
        unknown(sent, error);   // each reply settled its own script as it was decoded; any left has no reply
        drain();
      });
    } catch (Throwable e) {
      send.free();
      unknown(sent, e);
      for (Pending<?> p : scripts) {
        p.reply.completeExceptionally(e);   // not yet added if the batch could not be made
      }
    }
  }

  private static <R> void add(RScript batch, Pending<R> p, List<Pending<?>> sent) {
    sent.add(p);
    batch.<R>evalShaAsync(p.key, RScript.Mode.READ_WRITE, p.sha, p.type, List.of(p.key), p.args)
        .whenComplete(p::settle);
  }

  /**
   * Fails the scripts of an ended batch that have no reply of their own (the batch failed before it came, or
   * Redisson left it unanswered): whether they ran is not known.
   */
  private static void unknown(List<Pending<?>> sent, @Nullable Throwable error) {
    for (Pending<?> p : sent) {
      if (!p.reply.isDone()) {
        p.reply.completeExceptionally(error == null
            ? new RedisException("A pipelined batch of " + sent.size() + " scripts ended without this one's reply; "
                + "it may have run")
            : new RedisException("A pipelined batch of " + sent.size() + " scripts failed before this one's reply; "
                + "it may have run", error));
      }
    }
  }

  /** A send awaiting its reply, and the place it holds until then or for {@link #HOLD_NANOS}. */
  private final class Send {
    final long at;
    private final AtomicBoolean held = new AtomicBoolean(true);

    Send(long at) {
      this.at = at;
    }

    /** Gives its place back, once. */
    void free() {
      if (held.compareAndSet(true, false)) {
        holding.remove(this);
        inFlight.decrementAndGet();
      }
    }
  }

  /** One script waiting to be sent, and its reply. */
  private static final class Pending<R> {
    final String key;
    final String sha;
    final RScript.ReturnType type;
    final Object[] args;
    final CompletableFuture<R> reply = new CompletableFuture<>();

    Pending(String key, String sha, RScript.ReturnType type, Object[] args) {
      this.key = key;
      this.sha = sha;
      this.type = type;
      this.args = args;
    }

    void settle(R value, Throwable error) {
      if (error != null) {
        reply.completeExceptionally(error);
      } else {
        reply.complete(value);
      }
    }
  }
}
