/**
 * Breakwater for Spring AI: {@link io.breakwater.springai.BreakwaterAdvisor}, an advisor that guards every call and
 * stream of a {@code ChatClient}, and {@link io.breakwater.springai.CancellableCalls}, which makes a cancelled call close
 * its connection.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.springai;

import org.jspecify.annotations.NullMarked;
