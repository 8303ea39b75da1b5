package io.breakwater.internal.http;

import org.jspecify.annotations.Nullable;

/**
 * Text that came from a server (an error body, an error event's message) made safe to put into an exception message
 * or a log line: control characters are escaped, so a hostile server cannot forge log lines, and the text is cut to
 * {@link #MAX_CHARS} characters, so it cannot flood them.
 */
public final class ServerText {

  /** The most characters of server text that a message quotes. */
  public static final int MAX_CHARS = 200;

  private ServerText() {}

  /**
   * {@code text} with CR, LF, tab, every other control character and every lone surrogate escaped, cut to at most
   * {@link #MAX_CHARS} characters (then followed by {@code …}); the cut never splits an escape or a surrogate pair.
   */
  public static String quote(CharSequence text) {
    StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_CHARS) + 1);
    int length = text.length();
    for (int i = 0; i < length; i++) {
      char c = text.charAt(i);
      boolean pair = Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(text.charAt(i + 1));
      String escape = pair ? null : escape(c);
      int width = pair ? 2 : escape != null ? escape.length() : 1;
      if (out.length() + width > MAX_CHARS) {
        return out.append('…').toString();
      }
      if (pair) {
        out.append(c).append(text.charAt(++i));
      } else if (escape != null) {
        out.append(escape);
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  /** How {@code c} is written when it must not appear as itself, or {@code null} when it may. */
  private static @Nullable String escape(char c) {
    return switch (c) {
      case '\n' -> "\\n";
      case '\r' -> "\\r";
      case '\t' -> "\\t";
      default -> Character.isISOControl(c) || c == '\u2028' || c == '\u2029' || Character.isSurrogate(c)
          ? String.format("\\u%04x", (int) c) : null;
    };
  }
}
