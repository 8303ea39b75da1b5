package io.breakwater.internal.http;

/**
 * Text that came from a server (an error body, an error event's message) made safe to put into an exception message
 * or a log line: control characters are escaped, so a hostile server cannot forge log lines, and the text is cut to
 * {@link #MAX_CHARS} characters, so it cannot flood them.
 */
public final class ServerText {

  /** The most characters of server text that a message quotes. */
  public static final int MAX_CHARS = 200;

  private ServerText() {}

  /** {@code text} with CR, LF, tab and every other control character escaped, cut to {@link #MAX_CHARS}. */
  public static String quote(CharSequence text) {
    StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_CHARS) + 8);
    int length = text.length();
    for (int i = 0; i < length; i++) {
      if (out.length() >= MAX_CHARS) {
        return out.append('…').toString();
      }
      char c = text.charAt(i);
      switch (c) {
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.toString();
  }
}
