package io.breakwater.agent;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;
import org.jspecify.annotations.Nullable;

/**
 * Signalled, without calling the tool, when the call's setting up is wrong rather than its arguments: the Reactor
 * Context holds no tenant for a tool whose idempotency keys need one, or a key of your own is in another namespace
 * than the Context's tenant. Its kind is {@link FailureKind#MISCONFIGURED}: no retry, no fallback, and the model is
 * told the tool cannot be used right now. The message says what to change.
 *
 * <pre>{@code
 * tool.call(args).contextWrite(Context.of(TENANT, tenantId));   // what a multi-tenant tool needs
 * }</pre>
 */
public final class ToolMisconfiguredException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  public ToolMisconfiguredException(String tool, String message, @Nullable Throwable cause) {
    super(tool, FailureKind.MISCONFIGURED, "Tool '" + tool + "': " + message, cause);
  }
}
