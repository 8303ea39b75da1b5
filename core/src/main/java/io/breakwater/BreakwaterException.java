package io.breakwater;

import io.breakwater.failure.FailureKind;

/**
 * The common type of every failure that Breakwater itself raises (a deadline that expired, a breaker that is open,
 * a budget that ran out), as opposed to the failures of the calls it guards.
 *
 * <p>It is an interface because some Breakwater failures must also be what Reactor users already handle: a
 * {@link io.breakwater.deadline.DeadlineExceededException} is a {@link java.util.concurrent.TimeoutException}.
 * Match on it with {@code instanceof} or Reactor's typed operators:
 *
 * <pre>{@code
 * call.transformDeferred(withDeadline(Duration.ofSeconds(10)))
 *     .onErrorResume(BreakwaterException.class, e -> Mono.just("gave up: " + e.failureKind() + " in " + e.source()));
 * }</pre>
 *
 * <p>Breakwater's exceptions carry no stack trace: they are raised by timers and admission checks, where the stack
 * says nothing about the cause, and the message names what rejected the call instead.
 */
public interface BreakwaterException {

  /** The name of what rejected or ended the call: a deadline, a breaker, a budget. */
  String source();

  /** What kind of failure this is, for retries, breakers, fallbacks and failure feedback. */
  FailureKind failureKind();
}
