/**
 * Spring Boot auto-configuration: Breakwater from {@code breakwater.*} properties.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.boot;

import org.jspecify.annotations.NullMarked;
