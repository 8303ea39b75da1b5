package io.breakwater.internal.failure;

import io.breakwater.failure.FailureKind;

/**
 * What an operator raises at subscription, before any call is made, when it refuses the composition it was put in
 * (a retry or a hedge around a write it could repeat): a {@link FailureKind#MISCONFIGURED} failure, which no retry
 * can fix, with no cause and the message {@code Refusing to <verb> '<source>': <reason>}.
 *
 * <p>Not API: users catch the public exceptions that extend it.
 */
public abstract class Refusal extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  /**
   * @param verb what the operator refuses to do, e.g. {@code "retry"}
   * @param source the name of the policy that refused
   * @param reason why, and what to change
   */
  protected Refusal(String verb, String source, String reason) {
    super(source, FailureKind.MISCONFIGURED, "Refusing to " + verb + " '" + source + "': " + reason, null);
  }
}
