package io.breakwater.internal.limit;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.reactivestreams.Publisher;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * One call through a limit, for the interleaving tests: a dependency that counts the calls running (subscribed,
 * neither answered nor cancelled) and how many times this call reached it; a caller that can leave. How many run at
 * once is not an invariant here: a cancelled call may still be finishing its answer on another thread when its
 * permit goes to the next one, as with a real dependency.
 */
final class LimitedCall {

  private final AtomicInteger running;
  private final AtomicInteger subscriptions = new AtomicInteger();
  private final Sinks.One<String> answer = Sinks.one();
  private final BaseSubscriber<String> caller = new BaseSubscriber<>() {
    @Override
    protected void hookOnError(Throwable refusal) {
      // a refused or timed-out wait: the caller has its answer
    }
  };

  LimitedCall(AtomicInteger running) {
    this.running = running;
  }

  void start(Function<Publisher<String>, Publisher<String>> operator) {
    Mono<String> dependency = Mono.defer(() -> {
      subscriptions.incrementAndGet();
      running.incrementAndGet();
      AtomicInteger once = new AtomicInteger();
      Runnable out = () -> {
        if (once.getAndIncrement() == 0) {
          running.decrementAndGet();
        }
      };
      return answer.asMono().doOnTerminate(out).doOnCancel(out);
    });
    Mono.from(operator.apply(dependency)).subscribe(caller);
  }

  void answer() {
    answer.tryEmitValue("answer");
  }

  void cancel() {
    caller.dispose();
  }

  int subscriptions() {
    return subscriptions.get();
  }

  void checkSubscribedAtMostOnce() {
    check(subscriptions.get() <= 1, "one call reached the dependency " + subscriptions.get() + " times");
  }

  /**
   * Formats a number once, outside Lincheck's threads: the JDK's locale data cannot be initialised inside them (its
   * static initialiser fails under Lincheck's instrumentation), and the limits' error messages format durations.
   */
  static void loadLocaleData() {
    String.format("%.1f", 1.5);
  }

  /**
   * Explores {@code test}'s scenarios with Lincheck's model checker: its constructor sets the scene, then one
   * operation on each of two threads and one after them, in {@code iterations} scenarios of {@code invocations}
   * interleavings each (fixed numbers, so that a build takes the same time and finds the same failures).
   */
  static void explore(Class<?> test, int iterations, int invocations) {
    new ModelCheckingOptions()
        .iterations(iterations)
        .invocationsPerIteration(invocations)
        .threads(2)
        .actorsPerThread(1)
        .actorsBefore(0)
        .actorsAfter(1)
        .check(test);
  }

  static void check(boolean condition, String what) {
    if (!condition) {
      throw new IllegalStateException(what);
    }
  }
}
