package io.breakwater.internal.limit;

import static io.breakwater.internal.limit.RateBuckets.REQUESTS;
import static io.breakwater.internal.limit.RateBuckets.TOKENS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.breakwater.limit.ProviderRateLimits;
import io.breakwater.limit.ProviderRateLimits.Quota;
import io.breakwater.limit.ProviderRateLimits.Reading;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * The arithmetic of the two buckets of a rate limit ({@link RateBuckets}' javadoc, docs/limits.md's rules), which
 * the Redis rate limit's Lua script repeats: here under the owner's lock, as the Redis store's test double and the
 * in-memory limit's queue use it. 10 requests and 1 000 tokens every 10 s: one request and 100 tokens a second.
 */
class RateBucketsTest {

  private static final long S = 1_000_000_000L;
  private static final RateSettings SETTINGS = new RateSettings("openai", 10, Duration.ofSeconds(10), 1_000,
      Duration.ofSeconds(10), ProviderRateLimits.all(), Duration.ofSeconds(30), 1_000, Schedulers::immediate);

  @Test
  void theWaitForPermitsIsTheShortfallOfTheScarcerBucketOverItsRefillRate() {
    RateBuckets buckets = new RateBuckets(SETTINGS, 0);
    buckets.take(1_000);
    assertThat(buckets.nanosUntil(1, 500, 0)).as("500 tokens at 100 a second").isEqualTo(5 * S);
    assertThat(buckets.nanosUntil(1, 0, 0)).as("9 requests are there").isZero();
    for (int i = 0; i < 9; i++) {
      buckets.take(0);
    }
    assertThat(buckets.nanosUntil(3, 0, 0)).as("3 requests at one a second").isEqualTo(3 * S);
    assertThat(buckets.nanosUntil(3, 500, 0)).isEqualTo(5 * S);
    assertThat(buckets).hasToString("requests 0/10, tokens 0/1000");
    assertThat(new RateBuckets(new RateSettings("openai", 10, Duration.ofSeconds(10), -1, null,
        ProviderRateLimits.all(), Duration.ofSeconds(30), 1_000, Schedulers::immediate), 0))
        .hasToString("requests 10/10, tokens unlimited");
  }

  @Test
  void aClockThatWentBackRefillsNothing() {
    RateBuckets locked = new RateBuckets(SETTINGS, 10 * S);
    locked.take(1_000);
    locked.refill(5 * S);
    locked.refill(10 * S);
    assertThat(locked.available(TOKENS, 10 * S)).isZero();
    locked.refill(11 * S);
    assertThat(locked.available(TOKENS, 11 * S)).isCloseTo(100, within(1e-6));

    RateBuckets published = new RateBuckets(SETTINGS, 0);
    published.refill(10 * S);
    published.take(1_000);
    published.publish();
    published.refill(5 * S);
    published.refill(10 * S);
    assertThat(published.available(TOKENS, 10 * S)).as("taken back from the lock-free path at 5 s").isZero();
    published.refill(11 * S);
    assertThat(published.available(TOKENS, 11 * S)).isCloseTo(100, within(1e-6));
  }

  @Test
  void theProvidersRemainingCountsFromTheCallsAdmissionAndItsResetPacesTheRefill() {
    RateBuckets buckets = new RateBuckets(SETTINGS, 0);
    double requestsAtAdmission = buckets.admitted(REQUESTS);
    double tokensAtAdmission = buckets.admitted(TOKENS);
    buckets.take(300);   // a call admitted after the one whose answer follows
    buckets.observe(new Reading(new Quota(10, 5, null), new Quota(1_000, 500, Duration.ofSeconds(20)), null),
        requestsAtAdmission, tokensAtAdmission, 0, 0);
    assertThat(buckets.available(REQUESTS, 0)).as("5 left, less the request taken since").isEqualTo(4);
    assertThat(buckets.available(TOKENS, 0)).as("500 left, less the 300 taken since").isEqualTo(200);

    // full again only at the reset, 20 s away: 25 tokens a second until then, then 100
    assertThat(buckets.nanosUntil(1, 450, 0)).isCloseTo(10 * S, within(2L));
    assertThat(buckets.nanosUntil(1, 1_000, 0)).as("500 by the reset, 300 more at 100 a second")
        .isCloseTo(23 * S, within(2L));
    buckets.refill(10 * S);
    assertThat(buckets.available(TOKENS, 10 * S)).isCloseTo(450, within(1e-6));
    buckets.refill(22 * S);
    assertThat(buckets.available(TOKENS, 22 * S)).as("250 more by the reset, 200 in the 2 s after it")
        .isCloseTo(900, within(1e-6));
    buckets.take(900);
    assertThat(buckets.nanosUntil(1, 500, 22 * S)).as("past the reset: the configured rate")
        .isCloseTo(5 * S, within(2L));
    buckets.refill(24 * S);
    assertThat(buckets.available(TOKENS, 24 * S)).isCloseTo(200, within(1e-6));
  }

  @Test
  void anAnswerAsFullAsTheLimitPacesNothing() {
    RateBuckets buckets = new RateBuckets(SETTINGS, 0);
    buckets.observe(new Reading(null, new Quota(1_000, 1_000, Duration.ofSeconds(20)), null), 0, 0, 0, 0);
    buckets.take(500);
    buckets.refill(5 * S);
    assertThat(buckets.available(TOKENS, 5 * S)).isCloseTo(1_000, within(1e-6));
  }

  @Test
  void a429DespiteTheLimitKeepsItsShortfallInReserveAtMostHalfTheBucket() {
    RateBuckets buckets = new RateBuckets(SETTINGS, 0);
    buckets.take(200);
    double requests = buckets.admitted(REQUESTS);
    double tokens = buckets.admitted(TOKENS);
    buckets.refill(2 * S);
    // answered 429 at 2 s: the provider had 1 request and 600 tokens left, the limit held 10 and 1 000
    buckets.rejected(new Reading(new Quota(10, 1, null), new Quota(1_000, 600, null), null), 200, requests, tokens,
        0, 2 * S);
    assertThat(buckets.available(TOKENS, 2 * S))
        .as("600 left; the reserve is 1000 - (600 + 200 refilled since the admission)").isEqualTo(400);
    assertThat(buckets.available(REQUESTS, 2 * S)).as("the reserve of 10 - (1 + 2) is cut to half the bucket")
        .isZero();
    assertThat(buckets.canTake(0, 2 * S)).isFalse();
    assertThat(buckets.nanosUntil(1, 0, 2 * S)).as("1 request + 5 in reserve, 1 held: 5 s").isEqualTo(5 * S);
    assertThat(buckets.nanosUntil(0, 900, 2 * S)).as("900 tokens + 200 in reserve, 600 held: 5 s")
        .isEqualTo(5 * S);
  }

  @Test
  void aRetryAfterStopsEveryCallUntilItsInstantAndALaterShorterOneDoesNotShortenIt() {
    RateBuckets buckets = new RateBuckets(SETTINGS, 0);
    buckets.observe(new Reading(null, null, Duration.ofSeconds(5)), 0, 0, 0, 0);   // a 503 with retry-after 5
    assertThat(buckets.canTake(0, 5 * S - 1)).isFalse();
    assertThat(buckets.canTake(0, 5 * S)).isTrue();
    buckets.observe(new Reading(null, null, Duration.ofSeconds(1)), 0, 0, 0, 2 * S);
    assertThat(buckets.nanosUntil(1, 0, 2 * S)).isEqualTo(3 * S);
  }

  @Test
  void aRetryAfterOrResetTooLongForNanosecondsFromACustomReaderSaturatesInsteadOfThrowing() {
    // ProviderRateLimits is public: a reader of its own may hand over any non-negative Duration, far beyond the
    // 292 years a long holds in nanoseconds. The built-in readers cap theirs; the buckets must not rely on it.
    Duration forever = Duration.ofSeconds(Long.MAX_VALUE);
    RateBuckets observed = new RateBuckets(SETTINGS, 0);
    observed.observe(new Reading(null, new Quota(1_000, 0, forever), forever), 0, 0, 0, 0);
    assertThat(observed.canTake(0, Long.MAX_VALUE - 1)).as("blocked until the end of the clock").isFalse();
    assertThat(observed.nanosUntil(1, 0, 0)).isEqualTo(Long.MAX_VALUE);

    RateBuckets rejected = new RateBuckets(SETTINGS, 0);
    rejected.rejected(new Reading(new Quota(10, 0, forever), null, forever), 0, 0, 0, 0, 0);
    assertThat(rejected.canTake(0, Long.MAX_VALUE - 1)).isFalse();
  }

  @Test
  void a429StopsCallsForOneSecondWithoutARetryAfterAndEmptiesTheBucketsWhenItSaysNothingElse() {
    RateBuckets quiet = new RateBuckets(SETTINGS, 0);
    quiet.take(100);
    quiet.rejected(Reading.NONE, 100, quiet.admitted(REQUESTS), quiet.admitted(TOKENS), 0, 0);
    assertThat(quiet.available(REQUESTS, 0)).isZero();
    assertThat(quiet.available(TOKENS, 0)).isZero();
    assertThat(quiet.nanosUntil(1, 200, 0)).as("200 tokens refill in 2 s").isEqualTo(2 * S);

    RateBuckets plenty = new RateBuckets(SETTINGS, 0);
    plenty.rejected(new Reading(null, new Quota(1_000, 1_000, null), null), 0, 0, 0, 0, 0);
    assertThat(plenty.available(TOKENS, 0)).as("the provider still had them all").isEqualTo(1_000);
    assertThat(plenty.canTake(0, S - 1)).isFalse();
    assertThat(plenty.canTake(0, S)).isTrue();
  }

  @Test
  void whatACallGivesBackNeverFillsABucketPastItsLimit() {
    RateBuckets buckets = new RateBuckets(SETTINGS, 0);
    buckets.take(100);
    buckets.giveBack(100);
    assertThat(buckets.available(REQUESTS, 0)).isEqualTo(10);
    assertThat(buckets.available(TOKENS, 0)).isEqualTo(1_000);
    buckets.take(0);
    buckets.take(0);
    buckets.giveBackRequest();
    assertThat(buckets.available(REQUESTS, 0)).isEqualTo(9);
    buckets.giveBackRequest();
    buckets.giveBackRequest();
    assertThat(buckets.available(REQUESTS, 0)).isEqualTo(10);
  }

  @Test
  void aCallCostsTheTimeItsScarcerBucketTakesToRefillIt() {
    RateBuckets buckets = new RateBuckets(SETTINGS, 0);
    assertThat(buckets.cost(0)).as("one request at one a second").isCloseTo(S, within(1.0));
    assertThat(buckets.cost(500)).as("500 tokens at 100 a second").isCloseTo(5 * S, within(1.0));
    RateBuckets tokensOnly = new RateBuckets(new RateSettings("openai", -1, null, 1_000, Duration.ofSeconds(10),
        ProviderRateLimits.all(), Duration.ofSeconds(30), 1_000, Schedulers::immediate), 0);
    assertThat(tokensOnly.cost(0)).isZero();
    assertThat(tokensOnly.cost(500)).isCloseTo(5 * S, within(1.0));
  }

  @Test
  void aProvidersLimitLowersTheCapForOneIntervalAndNeverMakesACallImpossible() {
    RateBuckets buckets = new RateBuckets(SETTINGS, 0);
    // one answer, from a hostile or misconfigured proxy, says 0 requests and 1 token
    buckets.observe(new Reading(new Quota(0, Quota.UNKNOWN, null), new Quota(1, Quota.UNKNOWN, null), null),
        buckets.admitted(REQUESTS), buckets.admitted(TOKENS), 0, 0);
    assertThat(buckets).hasToString("requests 1/1, tokens 1/1");
    assertThat(buckets.fits(500)).as("a call of 500 tokens is delayed, not refused as too heavy").isTrue();
    assertThat(buckets.canTake(500, 0)).isFalse();
    assertThat(buckets.nanosUntil(1, 500, 0)).as("the configured cap is back after one interval (10 s), then "
        + "the 499 tokens above the lowered cap at 100 a second").isCloseTo(10 * S + 4_990_000_000L, within(2L));

    buckets.refill(10 * S);
    assertThat(buckets).as("the configured limit came back").hasToString("requests 1/10, tokens 1/1000");
    buckets.refill(15 * S);
    assertThat(buckets.canTake(500, 15 * S)).isTrue();

    // a limit the provider keeps repeating holds as long as it does
    buckets.observe(new Reading(null, new Quota(200, Quota.UNKNOWN, null), null), buckets.admitted(REQUESTS),
        buckets.admitted(TOKENS), 15 * S, 15 * S);
    buckets.refill(20 * S);
    buckets.observe(new Reading(null, new Quota(200, Quota.UNKNOWN, null), null), buckets.admitted(REQUESTS),
        buckets.admitted(TOKENS), 20 * S, 20 * S);
    buckets.refill(29 * S);
    assertThat(buckets.toString()).endsWith("/200");
    buckets.refill(30 * S);
    assertThat(buckets.toString()).endsWith("/1000");
  }
}
