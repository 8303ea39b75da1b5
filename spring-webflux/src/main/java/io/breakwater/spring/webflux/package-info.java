/**
 * Breakwater for Spring's {@code WebClient}, as one {@code ExchangeFilterFunction}.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.spring.webflux;

import org.jspecify.annotations.NullMarked;
