/**
 * Deadlines that travel in the Context and only tighten, and their HTTP header.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.deadline;

import org.jspecify.annotations.NullMarked;
