package io.breakwater.internal.stream;

import io.breakwater.stream.EventTooLargeException;
import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The newline-delimited JSON parser of one subscription, at the byte level: lines are split on LF before any UTF-8
 * decoding (LF never occurs inside a multi-byte sequence), so a code point split across buffers needs no special
 * handling. Not thread-safe: it is fed from {@code onNext}, which is serialised.
 */
public final class JsonLinesParser {

  private final int maxBytes;
  private final LineBuffer line;
  private List<String> out;

  public JsonLinesParser(int maxBytes) {
    this.maxBytes = maxBytes;
    this.line = new LineBuffer(maxBytes);
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
    line.shrinkIfIdle();
    List<String> lines = out;
    if (lines == null) {
      return List.of();
    }
    out = null;
    return lines;
  }

  /** The capacity of the line buffer, the memory this parser holds between buffers. For tests. */
  int retainedBytes() {
    return line.bytes.length;
  }

  private void append(ByteBuf buffer, int index, int length) {
    if (length == 0) {
      return;
    }
    if (line.length + length > maxBytes) {
      throw new EventTooLargeException(maxBytes, "ndjson-decoder", "NDJSON line exceeds " + maxBytes
          + " bytes: raise the limit with JsonLines.builder().maxLineBytes(n) if such lines are expected");
    }
    line.append(buffer, index, length);
  }

  private void processLine() {
    int end = line.end();
    int start = line.start(end);
    byte[] bytes = line.bytes;
    if (end > start && bytes[end - 1] == '\r') {
      end--;
    }
    boolean blank = true;
    for (int i = start; i < end && blank; i++) {
      byte b = bytes[i];
      blank = b == ' ' || b == '\t' || b == '\r';
    }
    if (blank) {
      return;
    }
    if (out == null) {
      out = new ArrayList<>(4);
    }
    out.add(new String(bytes, start, end - start, StandardCharsets.UTF_8));
  }
}
