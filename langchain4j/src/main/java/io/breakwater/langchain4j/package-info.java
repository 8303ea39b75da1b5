/**
 * Breakwater for LangChain4j: {@link io.breakwater.langchain4j.ModelGuard} decorates a {@code ChatModel} or a
 * {@code StreamingChatModel} with Breakwater's operators, and {@link io.breakwater.langchain4j.CancellableHttpClientBuilder}
 * makes a cancelled stream close its connection.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.langchain4j;

import org.jspecify.annotations.NullMarked;
