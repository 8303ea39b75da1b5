package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Writes an object given as values at JSON paths ({@code $.location}, {@code $.stops[1].city}, {@code $['a b']}),
 * in document order, as compact JSON text, one fragment per value: how Vertex AI streams a function call's arguments
 * ({@code functionCall.partialArgs}). A string may arrive in pieces ({@link #string} with {@code continues}); the
 * fragments joined are the object's JSON. A path that cannot be written in order (a key or index given twice, an
 * index out of order, a path into a value already written) fails with {@link IllegalArgumentException}: nothing is
 * guessed. Not thread-safe.
 */
final class JsonPathWriter {

  private static final JsonStringEncoder ENCODER = JsonStringEncoder.getInstance();

  /** An open container: the keys it holds (an object) or the next index (an array). */
  private static final class Frame {
    final @Nullable Set<String> keys;
    int members;

    Frame(boolean object) {
      this.keys = object ? new HashSet<>(4) : null;
    }
  }

  /** The open containers, the root first, and the path segments that lead into each one after the root. */
  private final List<Frame> frames = new ArrayList<>(4);
  private final List<Object> openPath = new ArrayList<>(4);
  /** The path of the string still open for more pieces, or {@code null}. */
  private @Nullable List<Object> openString;

  /** The fragment that writes {@code piece} of the string at {@code path}; {@code continues}: more pieces follow. */
  String string(String path, String piece, boolean continues) {
    List<Object> segments = parse(path);
    StringBuilder out = new StringBuilder(piece.length() + 16);
    if (!segments.equals(openString)) {
      moveTo(segments, out);
      out.append('"');
    }
    out.append(ENCODER.quoteAsString(piece));
    if (continues) {
      openString = segments;
    } else {
      openString = null;
      out.append('"');
    }
    return out.toString();
  }

  /** Whether {@code path} is the string still open for more pieces. */
  boolean continuesString(String path) {
    return openString != null && openString.equals(parse(path));
  }

  /** The fragment that writes {@code json} (a whole JSON value, as text) at {@code path}. */
  String value(String path, String json) {
    StringBuilder out = new StringBuilder(json.length() + 16);
    moveTo(parse(path), out);
    return out.append(json).toString();
  }

  /** The fragment that closes everything still open (the whole object, {@code {}} when nothing was written). */
  String close() {
    StringBuilder out = new StringBuilder(8);
    if (frames.isEmpty()) {
      return "{}";
    }
    closeString(out);
    while (!frames.isEmpty()) {
      pop(out);
    }
    return out.toString();
  }

  /** Closes what {@code segments} is not inside of, opens what it is, and writes the key or separator before it. */
  private void moveTo(List<Object> segments, StringBuilder out) {
    closeString(out);
    if (frames.isEmpty()) {
      if (!(segments.get(0) instanceof String)) {
        throw new IllegalArgumentException("the arguments are an object: a path starts with a key, not an index");
      }
      frames.add(new Frame(true));
      out.append('{');
    }
    int container = segments.size() - 1;
    int common = 0;
    while (common < openPath.size() && common < container && openPath.get(common).equals(segments.get(common))) {
      common++;
    }
    while (openPath.size() > common) {
      pop(out);
    }
    for (int i = common; i < container; i++) {
      member(segments.get(i), out);
      boolean object = segments.get(i + 1) instanceof String;
      frames.add(new Frame(object));
      openPath.add(segments.get(i));
      out.append(object ? '{' : '[');
    }
    member(segments.get(container), out);
  }

  /** Writes the separator and key of a new member of the innermost container. */
  private void member(Object segment, StringBuilder out) {
    Frame frame = frames.get(frames.size() - 1);
    if (frame.keys != null) {
      if (!(segment instanceof String key)) {
        throw new IllegalArgumentException("index [" + segment + "] into an object");
      }
      if (!frame.keys.add(key)) {
        throw new IllegalArgumentException("key '" + key + "' given twice, or after its object was closed");
      }
    } else if (!(segment instanceof Integer index)) {
      throw new IllegalArgumentException("key '" + segment + "' into an array");
    } else if (index != frame.members) {
      throw new IllegalArgumentException("array member [" + index + "] where index " + frame.members
          + " comes next");
    }
    if (frame.members++ > 0) {
      out.append(',');
    }
    if (frame.keys != null) {
      out.append('"').append(ENCODER.quoteAsString((String) segment)).append("\":");
    }
  }

  private void pop(StringBuilder out) {
    Frame frame = frames.remove(frames.size() - 1);
    if (!openPath.isEmpty() && frames.size() == openPath.size()) {
      openPath.remove(openPath.size() - 1);
    }
    out.append(frame.keys != null ? '}' : ']');
  }

  private void closeString(StringBuilder out) {
    if (openString != null) {
      openString = null;
      out.append('"');
    }
  }

  /** {@code $} then {@code .key}, {@code ['key']}, {@code ["key"]} or {@code [index]} segments: keys and indexes. */
  static List<Object> parse(String path) {
    if (path.length() < 2 || path.charAt(0) != '$') {
      throw new IllegalArgumentException("path '" + path + "' is not a JSON path into the arguments");
    }
    List<Object> segments = new ArrayList<>(4);
    int i = 1;
    while (i < path.length()) {
      char c = path.charAt(i);
      if (c == '.') {
        int end = i + 1;
        while (end < path.length() && path.charAt(end) != '.' && path.charAt(end) != '[') {
          end++;
        }
        if (end == i + 1) {
          throw new IllegalArgumentException("path '" + path + "' has an empty key");
        }
        segments.add(path.substring(i + 1, end));
        i = end;
      } else if (c == '[' && i + 1 < path.length() && (path.charAt(i + 1) == '\'' || path.charAt(i + 1) == '"')) {
        char quote = path.charAt(i + 1);
        int end = path.indexOf(quote, i + 2);
        if (end < 0 || end + 1 >= path.length() || path.charAt(end + 1) != ']') {
          throw new IllegalArgumentException("path '" + path + "' has an unclosed quoted key");
        }
        segments.add(path.substring(i + 2, end));
        i = end + 2;
      } else if (c == '[') {
        int end = path.indexOf(']', i);
        String digits = end < 0 ? "" : path.substring(i + 1, end);
        if (digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(d -> d >= '0' && d <= '9')) {
          throw new IllegalArgumentException("path '" + path + "' has an index that is not a small number");
        }
        segments.add(Integer.parseInt(digits));
        i = end + 1;
      } else {
        throw new IllegalArgumentException("path '" + path + "' has '" + c + "' where '.' or '[' was expected");
      }
    }
    return segments;
  }
}
