package io.breakwater.internal.boot;

import java.util.Collection;
import java.util.Locale;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/** Names the user wrote, held against the names that exist: the close match of a misspelling and the list to show. */
final class Names {

  /** The most edits (insertions, deletions, substitutions) a misspelling is taken to be away from its name. */
  static final int CLOSE = 2;

  private Names() {}

  /**
   * The name of {@code existing} closest to {@code name} when it is at most {@link #CLOSE} edits away (ignoring case),
   * else {@code null}; of two at the same distance, the first in alphabetical order.
   */
  static @Nullable String closeMatch(String name, Collection<String> existing) {
    String best = null;
    int bestDistance = CLOSE + 1;
    for (String candidate : new TreeSet<>(existing)) {
      int d = distance(name.toLowerCase(Locale.ROOT), candidate.toLowerCase(Locale.ROOT));
      if (d < bestDistance && !candidate.equals(name)) {
        best = candidate;
        bestDistance = d;
      }
    }
    return best;
  }

  /** " Did you mean 'x'?" when {@code name} has a close match in {@code existing}, else an empty string. */
  static String didYouMean(String name, Collection<String> existing) {
    String match = closeMatch(name, existing);
    return match == null ? "" : " Did you mean '" + match + "'?";
  }

  /** The names, sorted: {@code [a, b]}, or {@code none} when there are none. */
  static String list(Collection<String> names) {
    return names.isEmpty() ? "none" : new TreeSet<>(names).toString();
  }

  /** The Levenshtein distance of {@code a} and {@code b}. */
  static int distance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }
}
