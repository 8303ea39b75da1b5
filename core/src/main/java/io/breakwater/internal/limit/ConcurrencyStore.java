package io.breakwater.internal.limit;

import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;

/**
 * Where a concurrency limit's permits live, as its {@link ConcurrencyEngine} sees them: in memory
 * ({@link LocalPermits}) or in a {@link PermitStore} shared by every instance ({@link SharedPermits}). The engine owns
 * the queue and the turns; the store owns the permits and what holds one while a call runs, and is the only thing
 * that differs between the two limits. A permit is a non-empty id; {@link #NO_PERMIT} says none was free.
 */
interface ConcurrencyStore {

  /** The answer of {@link #take} when no permit is free. */
  String NO_PERMIT = "";

  /** Without any lock, while nobody waits: whether a permit was taken at once (then hold it with {@link #holder}). */
  boolean tryAcquire();

  /** The subscriber that holds a permit {@link #tryAcquire} took for {@code actual}'s call, and gives it back. */
  <T> CoreSubscriber<T> holder(CoreSubscriber<? super T> actual, boolean mono);

  /** Whether {@link #take} answers at once: then a call that may not wait is refused without queueing. */
  boolean answersAtOnce();

  /**
   * Takes a permit for the head of the queue: an in-memory store answers at once (returned; neither callback runs),
   * a shared one returns {@code null} and answers later through {@code answered}, or {@code unreachable}.
   */
  @Nullable
  String take(Consumer<String> answered, StoreOutage.Unreachable unreachable);

  /** The permit {@code permit}, taken by {@link #take}, now belongs to a granted turn. */
  void granted(String permit);

  /** The call of a granted turn, holding {@code permit}: gives it back, exactly once, when the call ends. */
  <T> Publisher<T> holding(String permit, Publisher<? extends T> source, boolean mono);

  /** Gives back a granted turn's permit whose call never ran. */
  void release(String permit);

  /** Gives back a permit taken for a turn that was not granted (its caller left while it was on its way). */
  void giveBack(String permit);

  int limit();

  /** Calls holding a permit of this instance. */
  int inFlight();

  /** How long the head waits to ask again after no permit was free; {@link Long#MAX_VALUE}: until one comes back. */
  long pollNanos();

  /** {@link RateStore#unreachable}. */
  void unreachable(@Nullable Throwable error, List<? extends Turn> waiting);

  /** For messages: {@code ""} in memory, {@code " of Redis semaphore bw:limit:{search}"} shared. */
  String where();

  /** The limit's {@code toString}. */
  String describe(int queued);
}
