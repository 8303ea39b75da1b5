package io.breakwater.internal.limit;

import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.RateLimit;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * A limit's meters, registered once when the limit is built (never per call), tagged {@code limit=<name>} and
 * {@code kind} ({@code concurrency} or {@code rate}):
 * <ul>
 *   <li>{@code breakwater.limit.permits} (gauge, concurrency): the limit now (an adaptive limit moves);</li>
 *   <li>{@code breakwater.limit.permits.used} (gauge, concurrency): permits held by calls in flight;</li>
 *   <li>{@code breakwater.limit.available} (gauge, rate; tag {@code resource}: {@code requests}, {@code tokens}): what
 *       could be taken now, the provider's headers and 429s included; NaN when that resource is unlimited;</li>
 *   <li>{@code breakwater.limit.queued} (gauge): calls waiting now;</li>
 *   <li>{@code breakwater.limit.waits} (counter): calls that found no permit and queued for one;</li>
 *   <li>{@code breakwater.limit.refusals} (counter, tag {@code reason}: a {@link LimitExceededException.Reason} in
 *       lower case): calls refused, by why.</li>
 * </ul>
 * Gauges read the limit when scraped. A second limit of the same name and kind on the same registry (a shared limit
 * built from an in-memory template) takes the gauges over; the counters are shared.
 */
final class LimitMetrics {

  static final String PERMITS = "breakwater.limit.permits";
  static final String PERMITS_USED = "breakwater.limit.permits.used";
  static final String AVAILABLE = "breakwater.limit.available";
  static final String QUEUED = "breakwater.limit.queued";
  static final String WAITS = "breakwater.limit.waits";
  static final String REFUSALS = "breakwater.limit.refusals";

  private final Counter waits;
  private final Map<LimitExceededException.Reason, Counter> refusals =
      new EnumMap<>(LimitExceededException.Reason.class);

  private LimitMetrics(MeterRegistry registry, Tags tags) {
    this.waits = Counter.builder(WAITS).tags(tags).description("calls that queued for a permit").register(registry);
    for (LimitExceededException.Reason reason : LimitExceededException.Reason.values()) {
      refusals.put(reason, Counter.builder(REFUSALS).tags(tags).tag("reason", reason.name().toLowerCase(Locale.ROOT))
          .description("calls the limit refused").register(registry));
    }
  }

  /** The meters of a concurrency limit, reading {@code limit}. */
  static LimitMetrics of(ConcurrencyLimit limit, MeterRegistry registry) {
    Tags tags = Tags.of("limit", limit.name(), "kind", "concurrency");
    gauge(registry, PERMITS, tags, limit, ConcurrencyLimit::limit);
    gauge(registry, PERMITS_USED, tags, limit, ConcurrencyLimit::inFlight);
    gauge(registry, QUEUED, tags, limit, ConcurrencyLimit::queued);
    return new LimitMetrics(registry, tags);
  }

  /** The meters of a rate limit, reading {@code limit}. */
  static LimitMetrics of(RateLimit limit, MeterRegistry registry) {
    Tags tags = Tags.of("limit", limit.name(), "kind", "rate");
    gauge(registry, AVAILABLE, tags.and("resource", "requests"), limit, l -> finite(l.availableRequests()));
    gauge(registry, AVAILABLE, tags.and("resource", "tokens"), limit, l -> finite(l.availableTokens()));
    gauge(registry, QUEUED, tags, limit, RateLimit::queued);
    return new LimitMetrics(registry, tags);
  }

  private static double finite(long available) {
    return available == Long.MAX_VALUE ? Double.NaN : available;
  }

  private static <T> void gauge(MeterRegistry registry, String name, Tags tags, T limit, ToDoubleFunction<T> read) {
    removeEarlier(registry, registry.find(name).tags(tags).gauge());
    Gauge.builder(name, limit, read).tags(tags).register(registry);
  }

  private static void removeEarlier(MeterRegistry registry, @Nullable Meter earlier) {
    if (earlier != null) {
      registry.remove(earlier);
    }
  }

  /** A call found no permit and queued. */
  void waited() {
    waits.increment();
  }

  /** A call was refused with {@code error}; anything but a {@link LimitExceededException} is not counted. */
  void refused(Throwable error) {
    if (error instanceof LimitExceededException e) {
      Counter c = refusals.get(e.reason());
      if (c != null) {
        c.increment();
      }
    }
  }
}
