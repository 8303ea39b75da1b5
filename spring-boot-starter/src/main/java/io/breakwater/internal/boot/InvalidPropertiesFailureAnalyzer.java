package io.breakwater.internal.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a refused {@code breakwater.*} setting at start-up as the property and what to change. */
public final class InvalidPropertiesFailureAnalyzer extends AbstractFailureAnalyzer<InvalidPropertiesException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, InvalidPropertiesException cause) {
    return new FailureAnalysis("Breakwater refused the configuration under '" + cause.property() + "': "
        + cause.reason(),
        "Change '" + cause.property() + "' in your configuration (application.yml, application.properties or the "
            + "environment) as the description says.",
        cause);
  }
}
