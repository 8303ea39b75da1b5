/**
 * How a failure is classified: failure kinds, the classifier, HTTP status errors.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.failure;

import org.jspecify.annotations.NullMarked;
