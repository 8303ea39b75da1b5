package io.breakwater.stream;

import io.breakwater.internal.stream.JsonLinesParser;
import io.netty.buffer.ByteBuf;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * Decodes newline-delimited JSON (NDJSON, JSON Lines: {@code application/x-ndjson}, as Ollama streams) from a stream
 * of byte buffers into its lines, in bounded memory and independently of how the bytes are chunked. It splits lines
 * and does not parse the JSON.
 *
 * <pre>{@code
 * Flux<JsonNode> objects = JsonLines.decode(HttpClient.create().post().uri(url).send(body).responseContent())
 *     .map(line -> mapper.readTree(line));
 * }</pre>
 *
 * <h2>Rules</h2>
 * <ul>
 *   <li>Lines end with LF; a CR before it is dropped (CRLF); a LF or a UTF-8 code point split across buffers changes
 *       nothing. One leading byte-order mark is stripped; invalid UTF-8 becomes U+FFFD.</li>
 *   <li>Blank lines (only spaces, tabs or CR) are skipped.</li>
 *   <li>An unterminated final line (no LF before the end) is discarded, as {@link ServerSentEvents} discards an
 *       unterminated event: a stream cut in the middle of a line must not deliver half a record.</li>
 *   <li>A line longer than {@link #maxLineBytes()} (default {@value #DEFAULT_MAX_LINE_BYTES} bytes, 8 MiB) fails the
 *       stream with an {@link EventTooLargeException} that names the limit and how to raise it; a buffer grown for a
 *       long line is released after it.</li>
 * </ul>
 *
 * <p>Buffers are read completely while they are delivered ({@code onNext}) and are neither retained nor released.
 * Per-subscription state is created at subscription; a decoder is immutable and can be shared.
 */
public final class JsonLines {

  /** The default limit of a line, in bytes: 8 MiB. */
  public static final int DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;

  private static final JsonLines DEFAULTS = new JsonLines(DEFAULT_MAX_LINE_BYTES);

  private final int maxLineBytes;

  private JsonLines(int maxLineBytes) {
    this.maxLineBytes = maxLineBytes;
  }

  /** Decodes {@code bytes} with the default limit. */
  public static Flux<String> decode(Publisher<ByteBuf> bytes) {
    return DEFAULTS.lines(bytes);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The lines of {@code bytes}; each subscription decodes afresh. */
  public Flux<String> lines(Publisher<ByteBuf> bytes) {
    return Flux.defer(() -> {
      JsonLinesParser parser = new JsonLinesParser(maxLineBytes);
      return Flux.from(bytes).map(parser::feed).concatMapIterable(lines -> lines, 1);
    });
  }

  /** The longest line accepted, in bytes. */
  public int maxLineBytes() {
    return maxLineBytes;
  }

  /** Builds a {@link JsonLines} decoder. Not thread-safe; {@link #build()} validates. */
  public static final class Builder {
    private int maxLineBytes = DEFAULT_MAX_LINE_BYTES;

    private Builder() {}

    /** The longest line accepted, in bytes (default 8 MiB); a longer one fails the stream. */
    public Builder maxLineBytes(int maxLineBytes) {
      this.maxLineBytes = maxLineBytes;
      return this;
    }

    public JsonLines build() {
      if (maxLineBytes < 16) {
        throw new IllegalArgumentException("maxLineBytes is " + maxLineBytes
            + ": give at least 16 bytes (the default is 8 MiB)");
      }
      return new JsonLines(maxLineBytes);
    }
  }
}
