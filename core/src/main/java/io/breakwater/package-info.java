/**
 * The one door: {@link io.breakwater.Breakwater}'s operators, used with {@code transformDeferred} on a {@code Mono} or
 * {@code Flux}, and the root of every Breakwater exception.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater;

import org.jspecify.annotations.NullMarked;
