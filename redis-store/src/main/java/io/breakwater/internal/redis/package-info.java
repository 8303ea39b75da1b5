/** Implementation: not API, may change in any release. Null-marked: a type without {@code @Nullable} is never null. */
@NullMarked
package io.breakwater.internal.redis;

import org.jspecify.annotations.NullMarked;
