/**
 * Web filters the starter installs: deadlines read from requests.
 *
 * <p>Null-marked: a type without {@code @Nullable} is never null.
 */
@NullMarked
package io.breakwater.boot.web;

import org.jspecify.annotations.NullMarked;
