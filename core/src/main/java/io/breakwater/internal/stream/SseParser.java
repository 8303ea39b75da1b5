package io.breakwater.internal.stream;

import io.breakwater.stream.EventTooLargeException;
import io.breakwater.stream.ServerSentEvent;
import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The WHATWG event-stream parser of one subscription, at the byte level: lines are split on CR, LF and CRLF before
 * any UTF-8 decoding (those bytes never occur inside a multi-byte sequence), so code points split across buffers
 * need no special handling. Not thread-safe: it is fed from {@code onNext}, which is serialised.
 */
public final class SseParser {

  private static final byte CR = '\r';
  private static final byte LF = '\n';
  private static final byte COLON = ':';
  private static final byte SPACE = ' ';

  private final int maxBytes;
  private final boolean comments;

  private final LineBuffer line;
  private byte[] data = new byte[LineBuffer.INITIAL_CAPACITY];
  private int dataLength;
  private @Nullable String eventType;
  private String lastEventId = "";
  private long retry = -1;
  /** The previous buffer ended with CR: a LF at the start of the next one belongs to it. */
  private boolean afterCr;

  private @Nullable List<ServerSentEvent> out;
  /** The error that ended this stream, once a line or an event went over the limit. */
  private @Nullable EventTooLargeException failure;

  public SseParser(int maxBytes, boolean comments) {
    this.maxBytes = maxBytes;
    this.comments = comments;
    this.line = new LineBuffer(maxBytes);
  }

  /**
   * Parses all readable bytes of {@code buffer} (without moving its reader index); the events completed by it.
   *
   * <p>If the buffer takes a line or the event being assembled over the limit, the events completed before that
   * point are still returned, and iterating past the last of them throws the {@link EventTooLargeException}: so a
   * subscriber gets them, then the error, however the bytes were split into buffers. The parser accepts no more
   * bytes after that (every later call throws the same error).
   */
  public Iterable<ServerSentEvent> feed(ByteBuf buffer) {
    if (failure != null) {
      throw failure;
    }
    try {
      parse(buffer);
    } catch (EventTooLargeException e) {
      failure = e;
      List<ServerSentEvent> before = out == null ? List.of() : out;
      out = null;
      return new EventsThenFailure(before, e);
    }
    shrinkIdleBuffers();
    List<ServerSentEvent> events = out;
    if (events == null) {
      return List.of();
    }
    out = null;
    return events;
  }

  private void parse(ByteBuf buffer) {
    int i = buffer.readerIndex();
    int end = buffer.writerIndex();
    if (afterCr && i < end) {
      afterCr = false;
      if (buffer.getByte(i) == LF) {
        i++;
      }
    }
    while (i < end) {
      int eol = buffer.forEachByte(i, end - i, ByteProcessor.FIND_CRLF);
      if (eol < 0) {
        append(buffer, i, end - i);
        break;
      }
      append(buffer, i, eol - i);
      i = eol + 1;
      if (buffer.getByte(eol) == CR) {
        if (i < end) {
          if (buffer.getByte(i) == LF) {
            i++;
          }
        } else {
          afterCr = true;
        }
      }
      processLine();
    }
  }

  /** The events completed before a buffer went over the limit; iterating past the last one throws the failure. */
  private record EventsThenFailure(List<ServerSentEvent> events, EventTooLargeException failure)
      implements Iterable<ServerSentEvent> {

    @Override
    public Iterator<ServerSentEvent> iterator() {
      Iterator<ServerSentEvent> it = events.iterator();
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          if (it.hasNext()) {
            return true;
          }
          throw failure;
        }

        @Override
        public ServerSentEvent next() {
          return it.next();
        }
      };
    }
  }

  /** A large event must not pin a large buffer for the rest of a long stream. */
  private void shrinkIdleBuffers() {
    line.shrinkIfIdle();
    if (dataLength == 0 && data.length > LineBuffer.SHRINK_ABOVE) {
      data = new byte[LineBuffer.INITIAL_CAPACITY];
    }
  }

  /** The bytes of the line and the event being assembled: at most the limit. For tests. */
  int bufferedBytes() {
    return line.length + dataLength;
  }

  /** The capacity of the line and event buffers, the memory this parser holds between buffers. For tests. */
  int retainedBytes() {
    return line.bytes.length + data.length;
  }

  private void append(ByteBuf buffer, int index, int length) {
    if (length == 0) {
      return;
    }
    int needed = line.length + length;
    if (needed > maxBytes || needed + dataLength > maxBytes) {
      throw new EventTooLargeException(maxBytes);
    }
    line.append(buffer, index, length);
  }

  private void processLine() {
    int end = line.end();
    int start = line.start(end);
    if (start == end) {
      dispatch();
      return;
    }
    byte[] l = line.bytes;
    if (l[start] == COLON) {
      if (comments) {
        emit(ServerSentEvent.comment(value(start + 1, end), lastEventId, retry));
      }
      return;
    }
    int colon = start;
    while (colon < end && l[colon] != COLON) {
      colon++;
    }
    int fieldLength = colon - start;
    int valueStart = colon < end ? colon + 1 : end;
    if (fieldLength == 4 && l[start] == 'd' && l[start + 1] == 'a' && l[start + 2] == 't' && l[start + 3] == 'a') {
      appendData(valueStart, end);
    } else if (fieldLength == 5 && l[start] == 'e' && l[start + 1] == 'v' && l[start + 2] == 'e'
        && l[start + 3] == 'n' && l[start + 4] == 't') {
      eventType = value(valueStart, end);
    } else if (fieldLength == 2 && l[start] == 'i' && l[start + 1] == 'd') {
      if (!containsNul(valueStart, end)) {
        lastEventId = value(valueStart, end);
      }
    } else if (fieldLength == 5 && l[start] == 'r' && l[start + 1] == 'e' && l[start + 2] == 't'
        && l[start + 3] == 'r' && l[start + 4] == 'y') {
      retry(valueStart, end);
    }
  }

  private void appendData(int valueStart, int end) {
    if (valueStart < end && line.bytes[valueStart] == SPACE) {
      valueStart++;
    }
    int length = end - valueStart;
    int needed = dataLength + length + 1;
    if (needed > maxBytes) {
      throw new EventTooLargeException(maxBytes);
    }
    if (needed > data.length) {
      data = Arrays.copyOf(data, Math.min(maxBytes, Math.max(needed, data.length * 2)));
    }
    System.arraycopy(line.bytes, valueStart, data, dataLength, length);
    data[needed - 1] = LF;
    dataLength = needed;
  }

  private void retry(int valueStart, int end) {
    if (valueStart < end && line.bytes[valueStart] == SPACE) {
      valueStart++;
    }
    if (valueStart == end) {
      return;
    }
    long value = 0;
    for (int i = valueStart; i < end; i++) {
      byte b = line.bytes[i];
      if (b < '0' || b > '9') {
        return;
      }
      value = value > (Long.MAX_VALUE - 9) / 10 ? Long.MAX_VALUE : value * 10 + (b - '0');
    }
    retry = value;
  }

  private boolean containsNul(int valueStart, int end) {
    for (int i = valueStart; i < end; i++) {
      if (line.bytes[i] == 0) {
        return true;
      }
    }
    return false;
  }

  /** The value from {@code valueStart} to {@code end}, one leading space stripped, decoded as UTF-8. */
  private String value(int valueStart, int end) {
    if (valueStart < end && line.bytes[valueStart] == SPACE) {
      valueStart++;
    }
    return valueStart == end ? "" : new String(line.bytes, valueStart, end - valueStart, StandardCharsets.UTF_8);
  }

  private void dispatch() {
    if (dataLength == 0) {
      eventType = null;
      return;
    }
    String text = dataLength == 1 ? "" : new String(data, 0, dataLength - 1, StandardCharsets.UTF_8);
    emit(ServerSentEvent.of(eventType, text, lastEventId, retry));
    dataLength = 0;
    eventType = null;
  }

  private void emit(ServerSentEvent event) {
    if (out == null) {
      out = new ArrayList<>(4);
    }
    out.add(event);
  }
}
