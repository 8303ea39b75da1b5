package io.breakwater.internal.retry;

import io.breakwater.internal.ContextKeys;
import io.breakwater.retry.StreamResume;
import java.util.HashSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * What one resumable stream subscription has delivered: the last position (handed to the next attempt through the
 * Context) and enough to drop duplicates (the highest sequence number, or the ids seen). Attempts are sequential,
 * so no synchronisation is needed.
 */
final class ResumeTracker<T> {

  private final StreamResume<T> resume;
  private @Nullable Object last;
  private long lastSequence = Long.MIN_VALUE;
  private @Nullable Set<Object> seen;

  ResumeTracker(StreamResume<T> resume) {
    this.resume = resume;
  }

  /** One attempt: the source, told where to continue, without the items already delivered. */
  Flux<T> attempt(Flux<T> source) {
    Object position = last;
    Flux<T> attempt = position == null ? source
        : source.contextWrite(ctx -> ctx.put(ContextKeys.RESUME_POSITION, position));
    return attempt.filter(this::firstDelivery);
  }

  boolean delivered() {
    return last != null;
  }

  private boolean firstDelivery(T item) {
    Object position = resume.positionOf(item);
    if (resume.isSequence()) {
      long sequence = ((Number) position).longValue();
      if (sequence <= lastSequence) {
        return false;
      }
      lastSequence = sequence;
    } else {
      if (seen == null) {
        seen = new HashSet<>();
      }
      if (!seen.add(position)) {
        return false;
      }
    }
    last = position;
    return true;
  }
}
