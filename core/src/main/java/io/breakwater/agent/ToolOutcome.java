package io.breakwater.agent;

import org.jspecify.annotations.Nullable;


/**
 * The result of {@link Tool#outcome}: either a value (from the tool or from a fallback) or a failure with feedback
 * the model can act on. An agent loop hands {@link #forModel()} to the model either way.
 *
 * <pre>{@code
 * flights.outcome(query).map(ToolOutcome::forModel)   // a JSON-ish value or a short failure report
 * }</pre>
 *
 * @param <R> the tool's result
 */
public sealed interface ToolOutcome<R> {

  /** Where a value came from. */
  enum Source {
    /** The tool itself. */
    TOOL,
    /** An alternate tool of the fallback chain. */
    ALTERNATE,
    /** The last good value for the same arguments. */
    STALE,
    /** The static default of the fallback chain. */
    DEFAULT;

    public String tag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** The text to give the model: the value's {@code toString()}, marked when degraded, or the failure report. */
  String forModel();

  /**
   * A value; {@code null} when the tool completed empty.
   *
   * @param value the value
   * @param source where it came from
   * @param via the alternate's name for {@link Source#ALTERNATE}, else {@code null}
   */
  record Success<R>(@Nullable R value, Source source, @Nullable String via) implements ToolOutcome<R> {

    /** Whether the value came from a fallback rather than the tool. */
    public boolean degraded() {
      return source != Source.TOOL;
    }

    @Override
    public String forModel() {
      String text = String.valueOf(value);
      return switch (source) {
        case TOOL -> text;
        case ALTERNATE -> text + "\n(from alternate " + via + ")";
        case STALE -> text + "\n(stale: the last good answer for these arguments, the tool failed now)";
        case DEFAULT -> text + "\n(default: the tool failed, this is a placeholder answer)";
      };
    }
  }

  /**
   * A failure no fallback covered.
   *
   * @param error what the caller of {@link Tool#call} would get
   * @param feedback the report for the model
   */
  record Failure<R>(Throwable error, ToolFailure feedback) implements ToolOutcome<R> {
    @Override
    public String forModel() {
      return feedback.render();
    }

    /** The redacted feedback only: the error's own message may quote arguments or credentials. */
    @Override
    public String toString() {
      return "Failure[" + feedback.render() + "]";
    }
  }
}
