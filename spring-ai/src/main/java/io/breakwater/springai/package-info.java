/**
 * Breakwater for Spring AI: {@link io.breakwater.springai.BreakwaterAdvisor}, an advisor that guards every call and
 * stream of a {@code ChatClient}; {@link io.breakwater.springai.CancellableCalls}, which makes a cancelled call close
 * its connection; and {@link io.breakwater.springai.BreakwaterToolCallback}, which runs each call of a Spring AI tool
 * as a Breakwater tool, its failures told to the model.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.springai;

import org.jspecify.annotations.NullMarked;
