package io.breakwater.internal.limit;

/** The rules every limit's name follows: a short tag, usable in a Redis key's hash tag. */
final class LimitNames {

  private LimitNames() {}

  static void check(String what, String name) {
    if (name.isBlank() || name.length() > 200 || name.indexOf('{') >= 0 || name.indexOf('}') >= 0) {
      throw new IllegalArgumentException(what + " name '" + (name.length() > 200 ? name.substring(0, 200) + "…" : name)
          + "' is blank, longer than 200 characters or contains a brace: name the dependency, e.g. \"openai\"");
    }
  }
}
