package io.breakwater.internal.agent;

import java.util.List;

/**
 * Credentials recognised by their shape wherever they appear in text, with or without a name: provider API keys
 * ({@code sk-}, {@code sk-ant-}, {@code sk-proj-}, Stripe's {@code sk_live_}, Google's {@code AIza}), cloud access
 * key ids ({@code AKIA}, {@code ASIA}, ...), GitHub, GitLab, Slack and Hugging Face tokens, JSON web tokens, and the
 * value after {@code Bearer}. A credential starts where no key character ({@code [A-Za-z0-9_-]}) precedes it, so
 * {@code risk-free} is not a key; its characters run to the first that cannot be part of it.
 *
 * <p>A hand-written scanner rather than a regular expression: a search reads each character of the text a bounded
 * number of times (a JDK regular expression with a lookbehind took 0.6 s for a MiB of spaces).
 */
final class CredentialShapes {

  private static final int KEY = 0;         // [A-Za-z0-9_-]
  private static final int ALNUM = 1;       // [A-Za-z0-9]
  private static final int ALNUM_ = 2;      // [A-Za-z0-9_]
  private static final int ALNUM_DASH = 3;  // [A-Za-z0-9-]
  private static final int UPPER = 4;       // [A-Z0-9]
  private static final int TOKEN68 = 5;     // [A-Za-z0-9._~+/=-]: a bearer token

  /** A literal prefix, then at least {@code min} characters of {@code run}. */
  private record Shape(String prefix, int run, int min) {}

  private static final List<Shape> SHAPES = List.of(
      new Shape("sk-", KEY, 6), new Shape("pk-", KEY, 6), new Shape("rk-", KEY, 6),
      new Shape("sk_live_", ALNUM, 8), new Shape("sk_test_", ALNUM, 8), new Shape("rk_live_", ALNUM, 8),
      new Shape("rk_test_", ALNUM, 8), new Shape("pk_live_", ALNUM, 8), new Shape("pk_test_", ALNUM, 8),
      new Shape("AKIA", UPPER, 16), new Shape("ASIA", UPPER, 16), new Shape("AGPA", UPPER, 16),
      new Shape("AIDA", UPPER, 16), new Shape("AROA", UPPER, 16), new Shape("ANPA", UPPER, 16),
      new Shape("ANVA", UPPER, 16), new Shape("AIPA", UPPER, 16),
      new Shape("AIza", KEY, 30),
      new Shape("ghp_", ALNUM, 20), new Shape("gho_", ALNUM, 20), new Shape("ghu_", ALNUM, 20),
      new Shape("ghs_", ALNUM, 20), new Shape("ghr_", ALNUM, 20), new Shape("github_pat_", ALNUM_, 20),
      new Shape("glpat-", KEY, 20),
      new Shape("xoxa-", ALNUM_DASH, 10), new Shape("xoxb-", ALNUM_DASH, 10), new Shape("xoxp-", ALNUM_DASH, 10),
      new Shape("xoxo-", ALNUM_DASH, 10), new Shape("xoxr-", ALNUM_DASH, 10), new Shape("xoxs-", ALNUM_DASH, 10),
      new Shape("hf_", ALNUM, 20));

  private static final int MIN_BEARER = 12;

  /** The bit of the characters a credential can start with: the prefixes', a token's {@code e}, Bearer's {@code b}. */
  private static final int FIRST = 1 << 6;

  private CredentialShapes() {}

  /** {@code text} with every credential of a known shape replaced by {@code mask} (after Bearer: its value). */
  static String mask(String text, String mask) {
    StringBuilder out = null;
    int copied = 0;
    int n = text.length();
    for (int i = 0; i < n; ) {
      char c = text.charAt(i);
      if (c >= 128 || (CLASSES[c] & FIRST) == 0 || i > 0 && in(KEY, text.charAt(i - 1))) {
        i++;
        continue;
      }
      int start = i;
      int end = shape(text, i);
      if (end < 0) {
        end = jwt(text, i);
      }
      if (end < 0) {
        int value = bearerValue(text, i);
        if (value >= 0) {
          start = value;
          end = run(text, value, TOKEN68);
        }
      }
      if (end < 0) {
        i++;
        continue;
      }
      if (out == null) {
        out = new StringBuilder(n);
      }
      out.append(text, copied, start).append(mask);
      copied = end;
      i = end;
    }
    return out == null ? text : out.append(text, copied, n).toString();
  }

  private static int shape(String text, int i) {
    for (Shape s : SHAPES) {
      if (text.startsWith(s.prefix(), i)) {
        int from = i + s.prefix().length();
        int end = run(text, from, s.run());
        if (end - from >= s.min()) {
          return end;
        }
      }
    }
    return -1;
  }

  /** The end of a JSON web token at {@code i} (a header and a payload that are JSON objects, a signature), or -1. */
  private static int jwt(String text, int i) {
    if (!text.startsWith("eyJ", i)) {
      return -1;
    }
    int header = run(text, i + 3, KEY);
    if (header - (i + 3) < 8 || !text.startsWith(".eyJ", header)) {
      return -1;
    }
    int payload = run(text, header + 4, KEY);
    if (payload - (header + 4) < 4 || !text.startsWith(".", payload)) {
      return -1;
    }
    return run(text, payload + 1, KEY);
  }

  /** Where the value of {@code Bearer <value>} at {@code i} starts (any case, a value of 12 or more), or -1. */
  private static int bearerValue(String text, int i) {
    if (!text.regionMatches(true, i, "bearer", 0, 6)) {
      return -1;
    }
    int value = i + 6;
    while (value < text.length() && Character.isWhitespace(text.charAt(value))) {
      value++;
    }
    return value > i + 6 && run(text, value, TOKEN68) - value >= MIN_BEARER ? value : -1;
  }

  /** The end of the run of characters of class {@code run} starting at {@code from}. */
  private static int run(String text, int from, int run) {
    int i = from;
    while (i < text.length() && in(run, text.charAt(i))) {
      i++;
    }
    return i;
  }

  private static boolean in(int run, char c) {
    return c < 128 && (CLASSES[c] & (1 << run)) != 0;
  }

  /** For each ASCII character, a bit for each run class it belongs to. */
  private static final byte[] CLASSES = new byte[128];

  static {
    for (char c = 0; c < 128; c++) {
      boolean upper = c >= 'A' && c <= 'Z';
      boolean digit = c >= '0' && c <= '9';
      boolean alnum = upper || digit || c >= 'a' && c <= 'z';
      boolean[] in = new boolean[6];
      in[KEY] = alnum || c == '-' || c == '_';
      in[ALNUM] = alnum;
      in[ALNUM_] = alnum || c == '_';
      in[ALNUM_DASH] = alnum || c == '-';
      in[UPPER] = upper || digit;
      in[TOKEN68] = in[KEY] || c == '.' || c == '~' || c == '+' || c == '/' || c == '=';
      for (int run = 0; run < in.length; run++) {
        CLASSES[c] |= (byte) (in[run] ? 1 << run : 0);
      }
      CLASSES[c] |= (byte) ("sprAgxhebB".indexOf(c) >= 0 ? FIRST : 0);
    }
  }
}
