package io.breakwater.composition;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One generated case of the composition suite: a stack of operators, applied per call as users write them, some
 * callers, a fault script the dependency follows, and the instants at which callers leave. Everything is data, so that
 * a failing case can be shrunk (see {@link #simpler()}) and printed as a regression test.
 *
 * @param layers the operators, innermost (next to the call) first; a task deadline is always outermost
 * @param sideEffect what the call declares with {@code sideEffect(..)} just inside the deadline; {@code null}: nothing
 * @param deadlineMillis the task deadline's budget
 * @param script the dependency's answer to its n-th attempt (the last one repeats)
 * @param callers the callers, started together
 * @param sameKey whether the callers share one idempotency key (duplicates of one write) or have one each
 * @param cancelAtMillis per caller, the instant it leaves, or -1 when it stays
 * @param retries per {@link Layer#RETRY} layer, innermost first, its {@code maxRetries}
 * @param taskRetries the task's retry budget ({@code withRetryBudget}), or -1 for none
 * @param permits the concurrency limit's permits
 * @param requestsPerSecond the rate limit's requests per second
 * @param hedgeDelayMillis the hedge's fixed delay
 * @param maxHedges the hedge's {@code maxHedges}
 * @param firstItemMillis the stream timeouts' first-item timeout
 * @param backoffMillis each retry's fixed back-off
 */
record CompositionCase(List<Layer> layers, SideEffectChoice sideEffect, long deadlineMillis, List<Fault> script,
    int callers, boolean sameKey, List<Long> cancelAtMillis, List<Integer> retries, int taskRetries, int permits,
    int requestsPerSecond, long hedgeDelayMillis, int maxHedges, long firstItemMillis, long backoffMillis) {

  /** The operators a stack is made of (the task deadline is always there, outermost). */
  enum Layer { PER_CALL_TIMEOUT, RETRY, GUARD, IDEMPOTENT, HEDGE, LIMIT, THROTTLE, STREAM_TIMEOUTS, INNER_DEADLINE }

  /** What the call declares itself to be. */
  enum SideEffectChoice { UNDECLARED, READ_ONLY, IDEMPOTENT_WRITE, NON_IDEMPOTENT_WRITE, DEDUPLICATED_WRITE }

  /** How the dependency answers one attempt. */
  enum FaultKind {
    /** Answers after the latency. */
    OK,
    /** Never answers. */
    STALL,
    /** 503 after the latency (the write may have been processed). */
    SERVER_ERROR,
    /** 429 with {@code Retry-After} (not processed). */
    RATE_LIMITED,
    /** The connection is reset after the request was written (processed or not: unknown). */
    RESET_AFTER_WRITE,
    /** Connection refused: nothing was written. */
    CONNECT_REFUSED;

    /** Whether an attempt answered so may have done the write. */
    boolean mayHaveWritten() {
      return this != RATE_LIMITED && this != CONNECT_REFUSED;
    }
  }

  /** One attempt's answer. */
  record Fault(FaultKind kind, long latencyMillis, long retryAfterSeconds) {
    @Override
    public String toString() {
      return kind + "(" + latencyMillis + " ms" + (kind == FaultKind.RATE_LIMITED ? ", retry-after "
          + retryAfterSeconds + " s" : "") + ")";
    }
  }

  /** A random case; {@code writeRuleOnMain} says whether the generator may pair a write with {@code idempotentBy}. */
  static CompositionCase random(SplittableRandom r, boolean writeRuleOnMain) {
    List<Layer> layers = new ArrayList<>();
    int depth = 1 + r.nextInt(6);
    Layer[] all = Layer.values();
    for (int i = 0; i < depth; i++) {
      Layer l = all[r.nextInt(all.length)];
      if (l == Layer.RETRY && layers.stream().filter(x -> x == Layer.RETRY).count() >= 2) {
        continue;   // at most two retries: enough to see whether nested retries multiply
      }
      if (l != Layer.RETRY && layers.contains(l)) {
        continue;
      }
      layers.add(r.nextInt(layers.size() + 1), l);
    }
    SideEffectChoice[] effects = SideEffectChoice.values();
    SideEffectChoice effect = effects[r.nextInt(effects.length)];
    if (!allowed(layers, effect, writeRuleOnMain)) {
      effect = r.nextBoolean() ? SideEffectChoice.READ_ONLY : SideEffectChoice.IDEMPOTENT_WRITE;
    }
    List<Fault> script = new ArrayList<>();
    int faults = 1 + r.nextInt(4);
    FaultKind[] kinds = FaultKind.values();
    for (int i = 0; i < faults; i++) {
      script.add(new Fault(kinds[r.nextInt(kinds.length)], r.nextInt(4) == 0 ? 0 : r.nextLong(1, 3_000),
          r.nextLong(0, 8)));
    }
    int callers = 1 + r.nextInt(3);
    long deadline = r.nextLong(200, 20_000);
    List<Long> cancelAt = new ArrayList<>();
    for (int i = 0; i < callers; i++) {
      cancelAt.add(r.nextInt(4) == 0 ? r.nextLong(0, deadline + 1) : -1L);
    }
    List<Integer> retries = new ArrayList<>();
    for (Layer l : layers) {
      if (l == Layer.RETRY) {
        retries.add(r.nextInt(5));
      }
    }
    return new CompositionCase(List.copyOf(layers), effect, deadline, List.copyOf(script), callers, r.nextBoolean(),
        List.copyOf(cancelAt), List.copyOf(retries), r.nextInt(3) == 0 ? r.nextInt(4) : -1, 1 + r.nextInt(2),
        1 + r.nextInt(4), r.nextLong(1, 2_000), 1 + r.nextInt(2), r.nextLong(1, 5_000), r.nextLong(0, 1_000));
  }

  /**
   * Whether the generator may make a case of {@code layers} declaring {@code effect}. Without the write rule
   * ({@code CompositionRun.WRITE_RULE_ON_MAIN} false) it holds back what only the rule makes safe: a write inside
   * {@code idempotentBy} (declared or implied), whose key is freed today by a retryable failure so that a retry or a
   * duplicate sends it again; and {@code DEDUPLICATED_WRITE}, which does not exist yet.
   */
  static boolean allowed(List<Layer> layers, SideEffectChoice effect, boolean writeRuleOnMain) {
    return writeRuleOnMain || effect != SideEffectChoice.DEDUPLICATED_WRITE && (!layers.contains(Layer.IDEMPOTENT)
        || effect == SideEffectChoice.READ_ONLY || effect == SideEffectChoice.IDEMPOTENT_WRITE);
  }

  /** Whether this case is one the generator may make (see {@link #allowed(List, SideEffectChoice, boolean)}). */
  boolean allowed(boolean writeRuleOnMain) {
    return allowed(layers, sideEffect, writeRuleOnMain);
  }

  /** Cases one step simpler than this one (a layer, a caller, a fault, a cancellation fewer...), for shrinking. */
  List<CompositionCase> simpler() {
    List<CompositionCase> out = new ArrayList<>();
    for (int i = 0; i < layers.size(); i++) {
      List<Layer> fewer = new ArrayList<>(layers);
      Layer removed = fewer.remove(i);
      List<Integer> fewerRetries = new ArrayList<>(retries);
      if (removed == Layer.RETRY) {
        int index = (int) layers.subList(0, i).stream().filter(x -> x == Layer.RETRY).count();
        fewerRetries.remove(index);
      }
      out.add(with(List.copyOf(fewer), List.copyOf(fewerRetries), script, callers, cancelAtMillis, sideEffect));
    }
    if (callers > 1) {
      out.add(with(layers, retries, script, callers - 1, cancelAtMillis.subList(0, callers - 1), sideEffect));
    }
    for (int i = 0; i < script.size(); i++) {
      if (script.size() > 1) {
        List<Fault> fewer = new ArrayList<>(script);
        fewer.remove(i);
        out.add(with(layers, retries, List.copyOf(fewer), callers, cancelAtMillis, sideEffect));
      }
      Fault f = script.get(i);
      if (f.latencyMillis() > 0) {
        List<Fault> quicker = new ArrayList<>(script);
        quicker.set(i, new Fault(f.kind(), f.latencyMillis() / 2, f.retryAfterSeconds()));
        out.add(with(layers, retries, List.copyOf(quicker), callers, cancelAtMillis, sideEffect));
      }
    }
    for (int i = 0; i < cancelAtMillis.size(); i++) {
      if (cancelAtMillis.get(i) >= 0) {
        List<Long> stays = new ArrayList<>(cancelAtMillis);
        stays.set(i, -1L);
        out.add(with(layers, retries, script, callers, List.copyOf(stays), sideEffect));
      }
    }
    for (int i = 0; i < retries.size(); i++) {
      if (retries.get(i) > 0) {
        List<Integer> fewer = new ArrayList<>(retries);
        fewer.set(i, retries.get(i) - 1);
        out.add(with(layers, List.copyOf(fewer), script, callers, cancelAtMillis, sideEffect));
      }
    }
    if (sideEffect != SideEffectChoice.UNDECLARED) {
      out.add(with(layers, retries, script, callers, cancelAtMillis, SideEffectChoice.UNDECLARED));
    }
    return out;
  }

  private CompositionCase with(List<Layer> layers, List<Integer> retries, List<Fault> script, int callers,
      List<Long> cancelAtMillis, SideEffectChoice sideEffect) {
    return new CompositionCase(layers, sideEffect, deadlineMillis, script, callers, sameKey, cancelAtMillis, retries,
        taskRetries, permits, requestsPerSecond, hedgeDelayMillis, maxHedges, firstItemMillis, backoffMillis);
  }

  /** Whether a write's key must reach the dependency at most once: the write runs inside {@code idempotentBy}. */
  boolean writeOnceByKey() {
    return layers.contains(Layer.IDEMPOTENT) && (sideEffect == SideEffectChoice.NON_IDEMPOTENT_WRITE
        || sideEffect == SideEffectChoice.UNDECLARED);
  }

  @Override
  public String toString() {
    return "stack (innermost first) " + layers + " then sideEffect(" + sideEffect + "), withRetryBudget("
        + taskRetries + "), withDeadline(" + deadlineMillis + " ms); retries " + retries + ", backoff "
        + backoffMillis + " ms; " + callers + " caller(s)" + (sameKey ? " on one key" : " on their own keys")
        + ", leaving at " + cancelAtMillis + " ms; script " + script + "; " + permits + " permit(s), "
        + requestsPerSecond + " request(s)/s, hedge after " + hedgeDelayMillis + " ms x" + maxHedges
        + ", first item within " + firstItemMillis + " ms";
  }
}
