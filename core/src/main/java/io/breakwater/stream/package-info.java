/**
 * Streams: first-item and idle timeouts, server-sent events and JSON lines decoding.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.stream;

import org.jspecify.annotations.NullMarked;
