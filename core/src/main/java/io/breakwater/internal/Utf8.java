package io.breakwater.internal;

import org.jspecify.annotations.Nullable;

/**
 * Sizes of text as UTF-8 bytes, counted without encoding it: an idempotent result against {@code maxResultBytes}, an
 * LLM response against {@code maxResponseBytes}.
 */
public final class Utf8 {

  private Utf8() {}

  /** The number of bytes {@code text} takes in UTF-8; 0 for {@code null}. A lone surrogate counts as 3 bytes. */
  public static long length(@Nullable CharSequence text) {
    if (text == null) {
      return 0;
    }
    long bytes = 0;
    int length = text.length();
    for (int i = 0; i < length; i++) {
      char c = text.charAt(i);
      if (c < 0x80) {
        bytes++;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(text.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }
}
