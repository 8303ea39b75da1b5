package io.breakwater.internal.limit;

import io.breakwater.internal.limit.BucketStore.Settlement;
import io.breakwater.internal.limit.BucketStore.Taken;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Where a rate limit's buckets live, as its {@link RateEngine} sees them: in memory ({@link LocalBuckets}) or in a
 * {@link BucketStore} shared by every instance ({@link SharedBuckets}). The engine owns the queue, the turns and what
 * a call's end settles; the store owns the permits, and is the only thing that differs between the two limits.
 */
interface RateStore {

  /**
   * Without any lock, while nobody waits: takes one request and {@code call}'s estimate if they are there, and gives
   * {@code call} the marks of its admission. {@link BucketLevel#DONE}, {@link BucketLevel#SHORT} (queue the call), or
   * anything else: ask {@link #takeLocked} under the engine's lock.
   */
  int tryTake(ThrottleSubscriber<?> call);

  /**
   * {@link #tryTake}'s second chance, under the engine's lock; {@code lockFree} its answer, {@code alone} whether
   * nobody is queued (else it takes nothing, and gives back what {@code tryTake} could not).
   */
  boolean takeLocked(ThrottleSubscriber<?> call, int lockFree, boolean alone);

  /**
   * Takes one request and {@code tokens} for the head of the queue. An in-memory store answers at once (the answer is
   * returned, and neither callback runs); a shared one returns {@code null} and answers later through
   * {@code answered}, or {@code unreachable} when it did not answer in time ({@code null}: it is still left alone
   * after an earlier outage).
   */
  @Nullable
  Taken take(long tokens, Consumer<Taken> answered, StoreOutage.Unreachable unreachable);

  /** Settles a call the store admitted; runs {@code settled} once the store has it (not at all if it failed). */
  void settle(Settlement settlement, Runnable settled);

  /** Whether a call of {@code tokens} could ever run. */
  boolean fits(long tokens);

  /**
   * How long until {@code requests} and {@code tokens} are there, by what the store knows now; {@code alone}: no call
   * is queued before them, so a store that does not know may say 0 and be asked.
   */
  long nanosUntil(double requests, double tokens, boolean alone);

  /** The fair queue's cost of a call of {@code tokens}: nanoseconds of the scarcer bucket. */
  double cost(long tokens);

  long availableRequests();

  long availableTokens();

  /** The shortest wait before the head of the queue asks again after an answer that its permits are not there. */
  long minPollNanos();

  /**
   * The store did not answer ({@code error}, or {@code null} while it is left alone): each of {@code waiting}, already
   * out of the queue, goes through the local fallback or is refused.
   */
  void unreachable(@Nullable Throwable error, List<? extends Turn> waiting);

  /** For messages: the permits, {@code "requests 3/10, tokens unlimited"}, or the store that keeps them. */
  String levels();

  /** For messages: {@code ""} in memory, {@code " from Redis hash bw:rate:{openai}"} for {@code "from"} shared. */
  String where(String preposition);

  /** For the limit's {@code toString}, between its name and its header reader: the store and the queue. */
  String describe(int queued, RateSettings settings);

}
