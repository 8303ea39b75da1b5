/**
 * Concurrency and rate limits, shared or in memory.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.limit;

import org.jspecify.annotations.NullMarked;
