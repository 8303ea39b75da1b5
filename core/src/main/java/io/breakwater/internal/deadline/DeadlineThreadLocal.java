package io.breakwater.internal.deadline;

import io.breakwater.deadline.Deadline;
import io.breakwater.internal.ContextKeys;
import io.micrometer.context.ThreadLocalAccessor;

/**
 * Bridges the {@link Deadline} in the Reactor Context to a {@link ThreadLocal}, through Micrometer
 * context-propagation. Registered by {@code META-INF/services/io.micrometer.context.ThreadLocalAccessor}, so
 * {@code ContextRegistry.getInstance()} finds it without any set-up.
 */
public final class DeadlineThreadLocal implements ThreadLocalAccessor<Deadline> {

  private static final ThreadLocal<Deadline> CURRENT = new ThreadLocal<>();

  /** The deadline restored on this thread, or {@code null}. */
  public static Deadline get() {
    return CURRENT.get();
  }

  @Override
  public Object key() {
    return ContextKeys.DEADLINE;
  }

  @Override
  public Deadline getValue() {
    return CURRENT.get();
  }

  @Override
  public void setValue(Deadline value) {
    CURRENT.set(value);
  }

  @Override
  public void setValue() {
    CURRENT.remove();
  }
}
