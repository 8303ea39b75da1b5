/**
 * Hedged calls: a second attempt when the first is slow.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.hedge;

import org.jspecify.annotations.NullMarked;
