/**
 * Reactor Netty responses as bodies or typed failures with bounded memory, and the idempotency key sent to the
 * dependency.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.http;

import org.jspecify.annotations.NullMarked;
