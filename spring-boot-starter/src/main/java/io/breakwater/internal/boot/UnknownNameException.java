package io.breakwater.internal.boot;

import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * Code asked {@code ToolDescriptors} or {@code Limits} for a name nothing configures. The message says what to add, the
 * names that exist and the close match of a misspelling; {@link UnknownNameFailureAnalyzer} turns it into Boot's
 * start-up report when a bean asked while the application started.
 */
public final class UnknownNameException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String kind;
  private final String name;
  private final Set<String> existing;
  private final String fix;

  /**
   * A lookup of {@code name}, a {@code kind} ("tool", "concurrency limit"), that none of {@code existing} is;
   * {@code fix} says what to add to configure it.
   */
  public UnknownNameException(String kind, String name, Set<String> existing, String fix) {
    super("No " + kind + " '" + name + "' is configured." + Names.didYouMean(name, existing) + " Configured: "
        + Names.list(existing) + ". To configure it: " + fix);
    this.kind = kind;
    this.name = name;
    this.existing = Set.copyOf(new TreeSet<>(existing));
    this.fix = fix;
  }

  /** What was asked for: "tool", "concurrency limit", "rate limit". */
  public String kind() {
    return kind;
  }

  /** The name asked for. */
  public String name() {
    return name;
  }

  /** The names that exist. */
  public Set<String> existing() {
    return existing;
  }

  /** The existing name at most two edits away from {@link #name()}, or {@code null}. */
  public @Nullable String closeMatch() {
    return Names.closeMatch(name, existing);
  }

  /** What to add to configure {@link #name()}. */
  public String fix() {
    return fix;
  }
}
