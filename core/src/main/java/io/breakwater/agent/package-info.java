/**
 * The agent layer: tools described once ({@link io.breakwater.agent.ToolDescriptor}), task budgets, and what a failed
 * call tells the model.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.agent;

import org.jspecify.annotations.NullMarked;
