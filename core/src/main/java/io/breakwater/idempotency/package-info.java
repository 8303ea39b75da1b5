/**
 * Idempotent calls: keys, the policy, the store, and the errors a duplicate gets.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.idempotency;

import org.jspecify.annotations.NullMarked;
