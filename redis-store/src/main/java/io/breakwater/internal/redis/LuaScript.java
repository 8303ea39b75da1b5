package io.breakwater.internal.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script and its SHA-1, computed once.
 *
 * @param text the script
 * @param sha its SHA-1, in lower-case hex, as Redis names it
 */
public record LuaScript(String text, String sha) {

  /** {@code text} with its SHA-1. */
  public static LuaScript of(String text) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
      return new LuaScript(text, HexFormat.of().formatHex(digest));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is not available in this JVM", e);
    }
  }
}
