package io.breakwater.stream;

import io.breakwater.internal.stream.SseParser;
import io.netty.buffer.ByteBuf;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * Decodes a {@code text/event-stream} (server-sent events) from a stream of byte buffers, following the WHATWG
 * event-stream rules exactly, in bounded memory.
 *
 * <pre>{@code
 * Flux<ServerSentEvent> events = ServerSentEvents.decode(
 *     HttpClient.create().get().uri(url).responseContent());
 *
 * // with comments (heartbeats) as items, and a larger limit:
 * ServerSentEvents decoder = ServerSentEvents.builder().comments(true).maxEventBytes(16 << 20).build();
 * Flux<ServerSentEvent> all = decoder.events(bytes);
 * }</pre>
 *
 * <h2>Rules</h2>
 * <ul>
 *   <li>Lines end with CR, LF or CRLF, also when a CRLF or a UTF-8 code point is split across buffers; one leading
 *       byte-order mark is stripped; invalid UTF-8 becomes U+FFFD.</li>
 *   <li>An empty line dispatches the event; an event whose data buffer is empty is not dispatched (its type is
 *       reset, its id stays in force).</li>
 *   <li>A line starting with {@code :} is a comment: not an event; emitted as an item with
 *       {@link ServerSentEvent#isComment()} only when {@link Builder#comments(boolean)} is on.</li>
 *   <li>{@code field: value} with one leading space of the value stripped; a line without a colon is a field with
 *       an empty value; unknown fields are ignored.</li>
 *   <li>{@code data} lines are joined with LF; {@code event} sets the type (default {@code "message"});
 *       {@code id} sets the last event id unless it contains NUL; {@code retry} sets the reconnection time only
 *       when it is all ASCII digits.</li>
 *   <li>An unterminated final event (no empty line before the end) is discarded.</li>
 *   <li>A line, or the event being assembled, larger than {@link #maxEventBytes()} (default
 *       {@value #DEFAULT_MAX_EVENT_BYTES} bytes, 8 MiB) fails the stream with an {@link EventTooLargeException}, after
 *       every event completed before it.</li>
 *   <li>What a subscriber sees never depends on how the bytes were split into buffers, errors included.</li>
 * </ul>
 *
 * <h2>Buffers</h2>
 * Each buffer is read completely while it is being delivered ({@code onNext}) and is neither retained nor
 * released: whoever produced it keeps ownership, as with Reactor Netty's {@code responseContent()}, which releases
 * received buffers itself. Per-subscription state is created at subscription; a decoder is immutable and can be
 * shared.
 */
public final class ServerSentEvents {

  /** The default limit of a line or an event, in bytes: 8 MiB. */
  public static final int DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024;

  private static final ServerSentEvents DEFAULTS = new ServerSentEvents(DEFAULT_MAX_EVENT_BYTES, false);

  private final int maxEventBytes;
  private final boolean comments;

  private ServerSentEvents(int maxEventBytes, boolean comments) {
    this.maxEventBytes = maxEventBytes;
    this.comments = comments;
  }

  /** Decodes {@code bytes} with the default settings: no comments, 8 MiB limit. */
  public static Flux<ServerSentEvent> decode(Publisher<ByteBuf> bytes) {
    return DEFAULTS.events(bytes);
  }

  /** The default decoder. */
  public static ServerSentEvents defaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Decodes {@code bytes}; each subscription decodes afresh. */
  public Flux<ServerSentEvent> events(Publisher<ByteBuf> bytes) {
    return Flux.defer(() -> {
      SseParser parser = new SseParser(maxEventBytes, comments);
      return Flux.from(bytes).map(parser::feed).concatMapIterable(events -> events, 1);
    });
  }

  /** The largest line or event accepted, in bytes. */
  public int maxEventBytes() {
    return maxEventBytes;
  }

  /** Whether comment lines are emitted as items. */
  public boolean comments() {
    return comments;
  }

  /** Builds a {@link ServerSentEvents} decoder. Not thread-safe; {@link #build()} validates and copies. */
  public static final class Builder {
    private int maxEventBytes = DEFAULT_MAX_EVENT_BYTES;
    private boolean comments;

    private Builder() {}

    /** The largest line or event accepted, in bytes (default 8 MiB); larger ones fail the stream. */
    public Builder maxEventBytes(int maxEventBytes) {
      this.maxEventBytes = maxEventBytes;
      return this;
    }

    /** Whether comment lines ({@code : ...}, typically heartbeats) are emitted as items (default false). */
    public Builder comments(boolean comments) {
      this.comments = comments;
      return this;
    }

    public ServerSentEvents build() {
      if (maxEventBytes < 16) {
        throw new IllegalArgumentException("maxEventBytes is " + maxEventBytes
            + ": give at least 16 bytes (the default is 8 MiB)");
      }
      return new ServerSentEvents(maxEventBytes, comments);
    }
  }
}
