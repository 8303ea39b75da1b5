package io.breakwater.internal.stream;

import io.breakwater.stream.EventTooLargeException;
import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The newline-delimited JSON parser of one subscription, at the byte level: lines are split on LF before any UTF-8
 * decoding (LF never occurs inside a multi-byte sequence), so a code point split across buffers needs no special
 * handling. Not thread-safe: it is fed from {@code onNext}, which is serialised.
 */
public final class JsonLinesParser {

  private static final int INITIAL_CAPACITY = 128;
  private static final int SHRINK_ABOVE = 64 * 1024;

  private final int maxBytes;
  private byte[] line = new byte[INITIAL_CAPACITY];
  private int lineLength;
  private boolean firstLine = true;
  private @Nullable List<String> out;

  public JsonLinesParser(int maxBytes) {
    this.maxBytes = maxBytes;
  }

  /** Parses all readable bytes of {@code buffer} (without moving its reader index); the lines completed by it. */
  public List<String> feed(ByteBuf buffer) {
    int i = buffer.readerIndex();
    int end = buffer.writerIndex();
    while (i < end) {
      int eol = buffer.forEachByte(i, end - i, ByteProcessor.FIND_LF);
      if (eol < 0) {
        append(buffer, i, end - i);
        break;
      }
      append(buffer, i, eol - i);
      i = eol + 1;
      processLine();
    }
    if (lineLength == 0 && line.length > SHRINK_ABOVE) {
      line = new byte[INITIAL_CAPACITY];   // a large line must not pin a large buffer for the rest of the stream
    }
    List<String> lines = out;
    if (lines == null) {
      return List.of();
    }
    out = null;
    return lines;
  }

  /** The capacity of the line buffer, the memory this parser holds between buffers. For tests. */
  int retainedBytes() {
    return line.length;
  }

  private void append(ByteBuf buffer, int index, int length) {
    if (length == 0) {
      return;
    }
    int needed = lineLength + length;
    if (needed > maxBytes) {
      throw new EventTooLargeException(maxBytes, "ndjson-decoder", "NDJSON line exceeds " + maxBytes
          + " bytes: raise the limit with JsonLines.builder().maxLineBytes(n) if such lines are expected");
    }
    if (needed > line.length) {
      line = Arrays.copyOf(line, Math.min(maxBytes, Math.max(needed, line.length * 2)));
    }
    buffer.getBytes(index, line, lineLength, length);
    lineLength = needed;
  }

  private void processLine() {
    int start = 0;
    int end = lineLength;
    lineLength = 0;
    if (firstLine) {
      firstLine = false;
      if (end >= 3 && line[0] == (byte) 0xEF && line[1] == (byte) 0xBB && line[2] == (byte) 0xBF) {
        start = 3;
      }
    }
    if (end > start && line[end - 1] == '\r') {
      end--;
    }
    boolean blank = true;
    for (int i = start; i < end && blank; i++) {
      byte b = line[i];
      blank = b == ' ' || b == '\t' || b == '\r';
    }
    if (blank) {
      return;
    }
    if (out == null) {
      out = new ArrayList<>(4);
    }
    out.add(new String(line, start, end - start, StandardCharsets.UTF_8));
  }
}
