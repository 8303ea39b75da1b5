/**
 * Actuator: the {@code breakwater} endpoint and the breakers' health.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.boot.actuate;

import org.jspecify.annotations.NullMarked;
