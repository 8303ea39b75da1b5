/**
 * Circuit breakers: the breaker, its registry, its state store and the scheduler-lag guard.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.breaker;

import org.jspecify.annotations.NullMarked;
