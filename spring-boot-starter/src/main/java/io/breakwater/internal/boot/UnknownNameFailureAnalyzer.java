package io.breakwater.internal.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports, as Boot's "APPLICATION FAILED TO START", a bean that asked {@code ToolDescriptors} or {@code Limits} for a
 * name nothing configures: the name, the close match, the names that exist and what to add.
 */
public final class UnknownNameFailureAnalyzer extends AbstractFailureAnalyzer<UnknownNameException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, UnknownNameException cause) {
    String match = cause.closeMatch();
    return new FailureAnalysis("A bean asked Breakwater for the " + cause.kind() + " '" + cause.name()
        + "', which is not configured. Configured: " + Names.list(cause.existing()) + ".",
        (match == null ? "" : "'" + cause.name() + "' is close to the configured '" + match + "': correct whichever "
            + "is misspelt, the name in your code or the one in your configuration. ")
            + "To configure '" + cause.name() + "': " + cause.fix(),
        cause);
  }
}
