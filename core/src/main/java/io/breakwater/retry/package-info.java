/**
 * Retries with a budget: the policy, backoff, budgets and stream resumption.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.retry;

import org.jspecify.annotations.NullMarked;
