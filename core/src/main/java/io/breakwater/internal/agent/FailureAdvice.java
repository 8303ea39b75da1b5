package io.breakwater.internal.agent;

import io.breakwater.agent.RemainingBudget;
import io.breakwater.agent.ToolArgumentsRefusedException;
import io.breakwater.agent.ToolFailure;
import io.breakwater.agent.ToolRateLimitedException;
import io.breakwater.agent.ToolUnavailableException;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.Durations;
import io.breakwater.internal.Saturating;
import io.breakwater.retry.RetryExhaustedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Turns a failed call into {@link ToolFailure}: a short reason, next actions and actions to avoid, per kind. */
public final class FailureAdvice {

  private static final int MAX_REASON = 200;

  private FailureAdvice() {}

  public static ToolFailure of(String tool, List<String> alternates, Throwable error, FailureKind kind,
      String reason, RemainingBudget remaining) {
    List<String> next = new ArrayList<>();
    List<String> avoid = new ArrayList<>();
    boolean unavailable = error instanceof ToolUnavailableException;
    switch (kind) {
      case TIMEOUT, CONNECTION, SERVER_ERROR, UNKNOWN -> {
        alternates.forEach(a -> next.add("call " + a + " instead"));
        next.add("continue without this result");
        if (!unavailable) {
          next.add("call " + tool + " once more later if the result is essential");
        }
        avoid.add("calling " + tool + " again with the same arguments right away");
      }
      case RATE_LIMITED -> {
        alternates.forEach(a -> next.add("call " + a + " instead"));
        next.add("continue without this result");
        avoid.add("calling " + tool + " again " + (error instanceof ToolRateLimitedException limited
            ? "in the next " + Durations.format(Duration.ofSeconds(Saturating.add(Saturating.millis(limited.waitFor()), 999) / 1000))
            : "soon") + ": it is rate-limited");
      }
      case CIRCUIT_OPEN -> {
        alternates.forEach(a -> next.add("call " + a + " instead"));
        next.add("continue without this result");
        avoid.add(unavailable ? "calling " + tool + " again in this task" : "calling " + tool + " until it recovers");
      }
      case INVALID_ARGUMENT -> {
        next.add("fix the arguments (" + reason + ") and call " + tool + " again");
        next.add("ask the user for the missing or wrong value");
        avoid.add("repeating the same arguments");
        avoid.add("switching tools to get around the error");
      }
      case CLIENT_ERROR -> {
        next.add("check the identifiers and permissions the arguments refer to");
        next.add("ask the user");
        avoid.add("retrying with the same arguments");
      }
      case BUSINESS -> {
        next.add("tell the user why: " + reason);
        next.add("change the request");
        avoid.add("retrying the same request");
      }
      case CONFLICT -> {
        next.add("wait for the identical call in progress to finish, then call " + tool
            + " again with the same arguments");
        avoid.add("changing the arguments to get around it");
      }
      case OUTCOME_UNKNOWN -> {
        next.add("tell the user that " + tool + " may already have done this, and that it must be checked");
        avoid.add("calling " + tool + " again with the same arguments");
      }
      case DEADLINE_EXCEEDED, BUDGET_EXHAUSTED -> {
        next.add("answer now with what you have");
        avoid.add("calling more tools");
      }
      case MISCONFIGURED, FATAL -> {
        next.add("tell the user that " + tool + " cannot be used right now");
        next.add("continue without this result");
        avoid.add("calling " + tool + " again in this task");
      }
    }
    return new ToolFailure(tool, kind, reason, next, avoid, remaining);
  }

  /** A few words on why the call failed, unredacted: the caller masks it. */
  public static String reason(Throwable error) {
    String text;
    if (error instanceof RetryExhaustedException re) {
      Throwable last = re.getCause() != null ? re.getCause() : re;
      int attempts = re.attempts().size();
      text = (last == re ? re.reason().tag().replace('_', ' ') : reason(last))
          + (attempts > 1 ? " (" + attempts + " attempts)" : "");
    } else if (error instanceof ToolArgumentsRefusedException refused) {
      return refused.reason() + " (the same arguments failed " + refused.failures()
          + (refused.failures() == 1 ? " time" : " times") + " in this task; not sent again)";
    } else if (error instanceof CallTimeoutException ct) {
      text = "no answer within " + Durations.format(ct.budget());
    } else if (error instanceof DeadlineExceededException) {
      text = "the task's deadline passed";
    } else if (error instanceof CircuitBreakerOpenException open) {
      text = "circuit breaker '" + open.source() + "' is open";
    } else if (error instanceof HttpStatusException http) {
      String detail = firstLine(http.getMessage(), "");
      text = detail.startsWith("HTTP " + http.status()) ? detail : "HTTP " + http.status() + firstLine(detail, ": ");
    } else {
      String message = firstLine(error.getMessage(), "");
      text = message.isEmpty() ? error.getClass().getSimpleName() : message;
    }
    return text.length() > MAX_REASON ? text.substring(0, MAX_REASON - 1) + "…" : text;
  }

  private static String firstLine(@Nullable String message, String prefix) {
    if (message == null || message.isBlank()) {
      return "";
    }
    int nl = message.indexOf('\n');
    return prefix + (nl < 0 ? message : message.substring(0, nl)).strip();
  }
}
