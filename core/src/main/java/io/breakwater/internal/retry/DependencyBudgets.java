package io.breakwater.internal.retry;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.breakwater.retry.RetryBudget;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.ref.WeakReference;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The retry budgets of dependencies, for policies built without a budget of their own: one
 * {@link RetryBudget#ofDefaults()} per dependency name and per {@link Scheduler} that times the calls. So every
 * {@code retryWithBudget(..)} of one name draws on one budget, however often its policy is built (inline, per call),
 * while a test that runs on its own {@code VirtualTimeScheduler} starts with fresh budgets and no other test's.
 *
 * <p>Bounded: each scheduler keeps at most {@value #MAX_NAMES} names, the least recently used forgotten first (a
 * forgotten name starts full again, and its gauge is removed), so names that come from outside cannot grow memory.
 * The budgets of a scheduler that is no longer reachable go with it.
 *
 * <p>The lookup is one volatile read and one cache read when the scheduler is the one last seen (almost always: a
 * process has one parallel scheduler); no lock on that path.
 */
public final class DependencyBudgets {

  /** The most dependency names one scheduler keeps budgets for. */
  public static final int MAX_NAMES = 1024;

  private static final Logger LOG = Loggers.getLogger(DependencyBudgets.class);

  /** Guarded by itself. Values hold their scheduler weakly, so that an entry goes when its scheduler does. */
  private static final Map<Scheduler, Scope> SCOPES = new WeakHashMap<>();
  private static volatile @Nullable Scope last;

  private DependencyBudgets() {}

  /** The budget of {@code dependency} on {@code scheduler}, made (and its gauge registered) on first use. */
  public static RetryBudget of(Scheduler scheduler, String dependency, MeterRegistry registry) {
    Scope scope = last;
    if (scope == null || scope.scheduler.get() != scheduler) {
      scope = scopeOf(scheduler);
      last = scope;
    }
    return scope.budget(dependency, registry);
  }

  private static Scope scopeOf(Scheduler scheduler) {
    synchronized (SCOPES) {
      return SCOPES.computeIfAbsent(scheduler, Scope::new);
    }
  }

  /** The budgets of one scheduler. */
  private static final class Scope {
    final WeakReference<Scheduler> scheduler;
    final AtomicBoolean warned = new AtomicBoolean();
    final Cache<String, Entry> budgets = Caffeine.newBuilder()
        .maximumSize(MAX_NAMES)
        .executor(Runnable::run)   // evict on the caller's thread: no task on the common pool
        .removalListener(this::forgotten)
        .build();

    Scope(Scheduler scheduler) {
      this.scheduler = new WeakReference<>(scheduler);
    }

    RetryBudget budget(String dependency, MeterRegistry registry) {
      Entry entry = budgets.getIfPresent(dependency);
      if (entry == null) {
        entry = budgets.get(dependency, name -> {
          RetryBudget made = RetryBudget.ofDefaults();
          RetryMetrics.registerBudgetGauge(name, made, registry, false);
          return new Entry(made, registry);
        });
      }
      return entry.budget;
    }

    private void forgotten(@Nullable String dependency, @Nullable Entry entry, RemovalCause cause) {
      if (dependency == null || entry == null || !cause.wasEvicted()) {
        return;
      }
      RetryMetrics.removeBudgetGauge(dependency, entry.budget, entry.registry);
      if (warned.compareAndSet(false, true)) {
        LOG.warn("More than {} dependency names use retry budgets on one scheduler; the least recently used are "
            + "forgotten and start full again. Dependency names should be fixed (a service, a tool), never built "
            + "from request data. Logged once per scheduler.", MAX_NAMES);
      }
    }
  }

  private record Entry(RetryBudget budget, MeterRegistry registry) {}
}
