package io.breakwater.internal.stream.llm;

import io.breakwater.stream.llm.LlmDelta;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** What an attempt emits, one per event: a batch of deltas, or the final failure of a stream that cannot go on. */
sealed interface Item permits Item.Batch, Item.Final {

  /** Whether the item counts as progress: it carries content, or it ends the stream. */
  boolean isProgress();

  /**
   * The deltas of one event (with the framing held back before the first content), its SSE id (or {@code null})
   * and its sequence number (or -1), whether it was the terminal event, and the decoder of the attempt that read it
   * (the one a resume continues, once its content is delivered).
   */
  record Batch(List<LlmDelta> deltas, boolean content, boolean terminal, @Nullable String eventId, long sequence,
      DialectDecoder decoder) implements Item {
    @Override
    public boolean isProgress() {
      return content || terminal;
    }
  }

  /**
   * A failure after content that will not be resumed, already in its final shape: it passes the retry operator as
   * an item, so that the retry neither retries nor wraps it, and is signalled after it.
   */
  record Final(Throwable error) implements Item {
    @Override
    public boolean isProgress() {
      return false;
    }
  }
}
