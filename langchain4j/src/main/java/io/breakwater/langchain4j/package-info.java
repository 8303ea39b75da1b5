/**
 * Breakwater for LangChain4j: {@link io.breakwater.langchain4j.ModelGuard} decorates a {@code ChatModel} or a
 * {@code StreamingChatModel} with Breakwater's operators, {@link io.breakwater.langchain4j.CancellableHttpClientBuilder}
 * makes a cancelled stream close its connection, and {@link io.breakwater.langchain4j.ToolGuard} gives each tool call
 * of an AI Service the agent layer.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.langchain4j;

import org.jspecify.annotations.NullMarked;
