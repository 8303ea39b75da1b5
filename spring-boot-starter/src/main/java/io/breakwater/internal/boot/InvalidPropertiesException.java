package io.breakwater.internal.boot;

import org.jspecify.annotations.Nullable;

/**
 * A {@code breakwater.*} setting that a core builder refused: the message is the property path, then the builder's
 * own message saying what to change. {@link InvalidPropertiesFailureAnalyzer} turns it into Boot's start-up report.
 */
public final class InvalidPropertiesException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  private final String property;
  private final String reason;

  public InvalidPropertiesException(String property, String reason, @Nullable Throwable cause) {
    super(property + ": " + reason, cause);
    this.property = property;
    this.reason = reason;
  }

  /** The property (or group of properties) at fault, e.g. {@code breakwater.retry.policies.flights}. */
  public String property() {
    return property;
  }

  /** What the core builder said. */
  public String reason() {
    return reason;
  }
}
