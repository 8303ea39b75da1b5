/**
 * Fault injection for your own resilience tests: latency, errors, stalls.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.chaos;

import org.jspecify.annotations.NullMarked;
