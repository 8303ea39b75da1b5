/**
 * Redis (Redisson) implementations of the stores: idempotency, breaker state, retry budgets, limits.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.redis;

import org.jspecify.annotations.NullMarked;
