package io.breakwater.internal.limit;

import io.breakwater.limit.ProviderRateLimits.Reading;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Where a shared rate limit keeps its two buckets, e.g. a Redis hash changed only by a Lua script. It does the
 * arithmetic of {@link RateBuckets} in one atomic step per operation, on the store's own clock.
 */
public interface BucketStore {

  /** Takes one request and {@code tokens} tokens if they are there (on top of the reserve). */
  Mono<Taken> take(long tokens);

  /** Settles a call admitted by {@link #take}. */
  Mono<Void> settle(Settlement settlement);

  /** What the store is, for messages: {@code "Redis hash bw:rate:{openai}"}. */
  @Override
  String toString();

  /**
   * The answer to a {@link #take}.
   *
   * @param taken whether the permits were taken
   * @param tooHeavy whether the call can never run: it needs more tokens than the bucket holds when full
   * @param waitNanos when not taken: how long until they could be; {@link Long#MAX_VALUE} for never
   * @param admittedRequests where the store's count of admitted requests stood after this call
   * @param admittedTokens where its count of admitted tokens stood after this call
   * @param at when, on the store's clock
   * @param availableRequests requests left now, on top of the reserve
   * @param availableTokens tokens left now, on top of the reserve
   * @param requestsPerNano the requests' refill rate now
   * @param tokensPerNano the tokens' refill rate now
   */
  record Taken(boolean taken, boolean tooHeavy, long waitNanos, double admittedRequests, double admittedTokens,
      long at, double availableRequests, double availableTokens, double requestsPerNano, double tokensPerNano) {}

  /** How a call admitted by the store ended. */
  enum Outcome {
    /** It ended, or failed after it may have reached the provider: its estimate stands unless corrected. */
    ENDED,
    /** Breakwater refused it before it reached the provider: its permits go back. */
    NEVER_SENT,
    /** The provider answered 429: its permits go back, the shortfall goes to the reserve, calls stop a while. */
    REJECTED
  }

  /**
   * A call to settle.
   *
   * @param estimate the tokens taken for it
   * @param actual its actual usage, or -1 when unknown
   * @param reading what the provider said, or {@code null}
   * @param admittedRequests, admittedTokens, admittedAt the marks {@link Taken} gave it
   */
  record Settlement(Outcome outcome, long estimate, long actual, @Nullable Reading reading, double admittedRequests,
      double admittedTokens, long admittedAt) {}
}
