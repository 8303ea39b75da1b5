package io.breakwater.internal.limit;

import io.breakwater.limit.CallWeight;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;

/**
 * Relays one call admitted by a rate limit and settles its permits, exactly once, when it ends: its actual usage
 * (the last figure its elements carried) replaces its estimate, the provider's headers in an element or in an HTTP
 * error update the limit, and a call refused by Breakwater further in gets its permits back. It remembers where the
 * limit's count of admitted permits stood when it was admitted, so that what the provider says about it can be
 * rebased to now. A call without a usage figure has nothing to settle when it is cancelled, so its end is settled
 * without a compare-and-set; a {@code Mono} is settled by its value (nothing to do without a usage figure), and what
 * follows its value is only relayed.
 */
final class ThrottleSubscriber<T> extends PermitRelay<T> {

  private final RateEngine limit;
  /** Its weight: the estimate, and the usage figure and headers its elements carry. */
  private final CallWeight<? super T> weight;
  @Nullable
  private Function<? super T, ? extends Map<String, ? extends List<String>>> headers;

  /** Where the limit's count of admitted requests and tokens stood after this call was admitted. */
  double admittedRequests;
  double admittedTokens;
  /** When it was admitted, on the limit's clock. */
  long admittedAt;

  private long actualTokens = -1;
  /** A {@code Mono}'s call ends with its value: it is settled then, before its value goes downstream. */
  private final boolean mono;
  private boolean settledOnValue;

  ThrottleSubscriber(CoreSubscriber<? super T> actual, RateEngine limit, CallWeight<? super T> weight,
      boolean mono) {
    super(actual);
    this.mono = mono;
    this.limit = limit;
    this.weight = weight;
    this.headers = weight.headers();
  }

  /** The tokens it took before it ran. */
  long estimate() {
    return weight.estimate();
  }

  /** Records where the limit stood when this call was admitted. */
  ThrottleSubscriber<T> admitted(double requests, double tokens, long at) {
    this.admittedRequests = requests;
    this.admittedTokens = tokens;
    this.admittedAt = at;
    return this;
  }

  @Override
  String operatorName() {
    return "throttledBy(" + limit.name() + ")";
  }

  @Override
  public void onNext(T t) {
    checkNotNull(t);
    if (weight.actual() != null || headers != null) {
      try {
        read(t);
      } catch (Throwable e) {
        s.cancel();
        onError(Operators.onOperatorError(e, actual.currentContext()));
        return;
      }
    }
    if (mono && !settledOnValue) {
      settledOnValue = true;
      if (weight.actual() != null && settle()) {
        // what follows a Mono's value downstream (the next call of a chain) sees the limit corrected
        limit.completed(this, actualTokens);
      }
    }
    actual.onNext(t);
  }

  private void read(T t) {
    ToLongFunction<? super T> usage = weight.actual();
    if (usage != null) {
      long figure = usage.applyAsLong(t);
      if (figure >= 0) {
        actualTokens = figure;
      }
    }
    if (headers != null) {
      Map<String, ? extends List<String>> found = headers.apply(t);
      if (found != null) {
        headers = null;
        limit.headers(this, found);
      }
    }
  }

  @Override
  public void onError(Throwable t) {
    if (settledOnValue) {
      actual.onError(t);
    } else if (settleOnce()) {
      limit.failed(this, t, actualTokens);
      actual.onError(t);
    } else {
      Operators.onErrorDropped(t, actual.currentContext());
    }
  }

  @Override
  public void onComplete() {
    if (settledOnValue) {
      actual.onComplete();
    } else if (settleOnce()) {
      limit.completed(this, actualTokens);
      actual.onComplete();
    }
  }

  @Override
  public void cancel() {
    s.cancel();
    if (weight.actual() != null && settle() && actualTokens >= 0) {
      limit.completed(this, actualTokens);
    }
  }

  /**
   * Whether this end settles the call: only a call with a usage figure may also be settled by a cancellation racing
   * its end, so only it needs the compare-and-set.
   */
  private boolean settleOnce() {
    return weight.actual() != null ? settle() : settleAlone();
  }
}
