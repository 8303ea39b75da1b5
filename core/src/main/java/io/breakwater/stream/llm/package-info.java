/**
 * The LLM streaming client: dialects, deltas, the assembled response and its errors.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.stream.llm;

import org.jspecify.annotations.NullMarked;
