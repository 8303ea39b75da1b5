package io.breakwater.stream;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One item decoded from a {@code text/event-stream} by {@link ServerSentEvents}: a dispatched event, or (only when
 * the decoder was asked for them) a comment line.
 *
 * <pre>{@code
 * ServerSentEvents.decode(response.responseContent())
 *     .takeUntil(e -> e.data().equals("[DONE]"))
 *     .map(ServerSentEvent::data);
 * }</pre>
 *
 * <ul>
 *   <li>{@link #event()} is the event's type: {@code "message"} when the stream gave none.</li>
 *   <li>{@link #data()} is the event's data lines joined with LF.</li>
 *   <li>{@link #id()} is the last event id in force when the event was dispatched: an {@code id} field persists
 *       across events until another replaces it (an empty {@code id:} resets it to {@code ""}), as the WHATWG rules
 *       say; {@code ""} if the stream never set one.</li>
 *   <li>{@link #retry()} is the reconnection time in force, in milliseconds: the last valid {@code retry} field seen
 *       so far (it persists like the id), or {@code -1} if the stream never set one.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class ServerSentEvent {

  /** The type of an event whose stream gave no {@code event} field. */
  public static final String DEFAULT_TYPE = "message";

  private final String event;
  private final String data;
  private final String id;
  private final long retry;
  private final boolean comment;

  private ServerSentEvent(String event, String data, String id, long retry, boolean comment) {
    this.event = event;
    this.data = data;
    this.id = id;
    this.retry = retry;
    this.comment = comment;
  }

  /** An event; a {@code null} or empty type becomes {@code "message"}, a {@code null} id {@code ""}. */
  public static ServerSentEvent of(@Nullable String event, String data, @Nullable String id, long retry) {
    return new ServerSentEvent(event == null || event.isEmpty() ? DEFAULT_TYPE : event,
        Objects.requireNonNull(data, "data"), id == null ? "" : id, retry < 0 ? -1 : retry, false);
  }

  /** An event of type {@code "message"} without id or retry. */
  public static ServerSentEvent message(String data) {
    return of(DEFAULT_TYPE, data, "", -1);
  }

  /**
   * A comment line ({@code : text}); {@code text} is what follows the colon, one leading space stripped. Its
   * {@link #event()} is {@code ""}, its {@link #data()} the text; id and retry are those in force.
   */
  public static ServerSentEvent comment(String text, @Nullable String id, long retry) {
    return new ServerSentEvent("", Objects.requireNonNull(text, "text"), id == null ? "" : id,
        retry < 0 ? -1 : retry, true);
  }

  /** The event's type; {@code "message"} if the stream gave none; {@code ""} for a comment. */
  public String event() {
    return event;
  }

  /** The data lines joined with LF (no trailing LF); for a comment, its text. */
  public String data() {
    return data;
  }

  /** The last event id in force; {@code ""} if none. */
  public String id() {
    return id;
  }

  /** The reconnection time in force, in milliseconds; {@code -1} if the stream never set one. */
  public long retry() {
    return retry;
  }

  /** Whether this item is a comment line rather than an event. */
  public boolean isComment() {
    return comment;
  }

  /**
   * Whether this item only keeps the connection alive: a comment, or an event of type {@code ping},
   * {@code keepalive} or {@code heartbeat}. Use its negation as the progress test of
   * {@link io.breakwater.Breakwater#idleTimeout(java.time.Duration, java.util.function.Predicate)}.
   */
  public boolean isHeartbeat() {
    return comment || event.equals("ping") || event.equals("keepalive") || event.equals("heartbeat");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ServerSentEvent e && retry == e.retry && comment == e.comment && event.equals(e.event)
        && data.equals(e.data) && id.equals(e.id);
  }

  @Override
  public int hashCode() {
    return Objects.hash(event, data, id, retry, comment);
  }

  @Override
  public String toString() {
    return comment
        ? "ServerSentEvent{comment=" + data + "}"
        : "ServerSentEvent{event=" + event + ", data=" + data + ", id=" + id + ", retry=" + retry + "}";
  }
}
