package io.breakwater.internal.stream;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * The bytes of the line being assembled by a byte-level stream parser ({@link SseParser}, {@link JsonLinesParser}):
 * it grows by doubling up to the parser's limit, drops a UTF-8 byte order mark at the start of the stream, and shrinks
 * back once a large line is done, so one large line does not pin a large buffer for the rest of a long stream. The
 * parser checks its limit before it appends. Not thread-safe, like its parser.
 */
final class LineBuffer {

  static final int INITIAL_CAPACITY = 128;
  /** A buffer larger than this is given back once idle; the SSE parser's event buffer follows the same rule. */
  static final int SHRINK_ABOVE = 64 * 1024;

  private final int maxBytes;
  /** The line's bytes: {@code bytes[0 .. length)}; read directly by the parser between {@link #end()} calls. */
  byte[] bytes = new byte[INITIAL_CAPACITY];
  int length;
  private boolean firstLine = true;

  LineBuffer(int maxBytes) {
    this.maxBytes = maxBytes;
  }

  /** Appends {@code count} bytes of {@code buffer} from {@code index}; the parser has checked its limit. */
  void append(ByteBuf buffer, int index, int count) {
    int needed = length + count;
    if (needed > bytes.length) {
      bytes = Arrays.copyOf(bytes, Math.min(maxBytes, Math.max(needed, bytes.length * 2)));
    }
    buffer.getBytes(index, bytes, length, count);
    length = needed;
  }

  /**
   * Ends the line: the buffer is empty for the next one, and the line stays readable in {@code bytes} up to the
   * length this returned, from {@link #start(int)}.
   */
  int end() {
    int end = length;
    length = 0;
    return end;
  }

  /** Where the line ending at {@code end} starts: after a byte order mark if it is the stream's first line. */
  int start(int end) {
    if (!firstLine) {
      return 0;
    }
    firstLine = false;
    return end >= 3 && bytes[0] == (byte) 0xEF && bytes[1] == (byte) 0xBB && bytes[2] == (byte) 0xBF ? 3 : 0;
  }

  /** Gives back a large buffer once no line is being assembled. */
  void shrinkIfIdle() {
    if (length == 0 && bytes.length > SHRINK_ABOVE) {
      bytes = new byte[INITIAL_CAPACITY];
    }
  }
}
