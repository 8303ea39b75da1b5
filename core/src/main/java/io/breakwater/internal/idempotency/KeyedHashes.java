package io.breakwater.internal.idempotency;

import io.breakwater.idempotency.IdempotencyKey;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA-256 under a per-deployment secret, for what an idempotency store, logs and dependencies see of a key: the
 * store key, the stored fingerprint, a short tag for messages, and the value sent in an {@code Idempotency-Key}
 * header. Without the secret, none of them can be recomputed from guessed
 * arguments. Each use clones a {@link Mac} made once, so no provider is looked up on a call's thread.
 */
public final class KeyedHashes {

  private static final HexFormat HEX = HexFormat.of();

  /** Hex digits of the tag shown in messages and logs: 32 bits, enough to tell keys apart in one incident. */
  private static final int TAG_HEX_DIGITS = 8;

  private static final byte[] KEY = purpose("key");
  private static final byte[] FINGERPRINT = purpose("fingerprint");
  private static final byte[] TAG = purpose("tag");
  private static final byte[] SENT = purpose("sent");

  private final Mac prototype;
  private final ThreadLocal<Mac> perThread = ThreadLocal.withInitial(this::cloneOfPrototype);

  public KeyedHashes(byte[] secret) {
    try {
      prototype = Mac.getInstance("HmacSHA256");
      prototype.init(new SecretKeySpec(secret, "HmacSHA256"));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
    }
  }

  /** {@code namespace:tool:args:<hmac>} for a derived key, {@code namespace:tool:key:<hmac>} for a client's key. */
  public String storeKey(IdempotencyKey key) {
    return key.namespace() + ":" + key.tool() + (key.isExplicit() ? ":key:" : ":args:") + hmac(KEY, key.value());
  }

  /** The keyed fingerprint of the key's payload. */
  public String storeFingerprint(IdempotencyKey key) {
    return hmac(FINGERPRINT, key.fingerprint());
  }

  /** {@code namespace:tool:#<8 hex digits>}: tells keys apart in messages and logs, and gives nothing away. */
  public String tag(IdempotencyKey key) {
    return key.namespace() + ":" + key.tool() + ":#" + hmac(TAG, key.value()).substring(0, TAG_HEX_DIGITS);
  }

  /**
   * The key as a dependency is sent it: 64 hex digits, naming neither namespace nor tool, and neither the store key
   * nor the tag (each purpose hashes apart).
   */
  public String sentKey(IdempotencyKey key) {
    return hmac(SENT, key.value());
  }

  /** The purpose's name and a zero byte, which every hash starts with, so that no purpose's hash serves another. */
  private static byte[] purpose(String name) {
    byte[] bytes = new byte[name.length() + 1];
    System.arraycopy(name.getBytes(StandardCharsets.US_ASCII), 0, bytes, 0, name.length());
    return bytes;
  }

  private String hmac(byte[] purpose, String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);   // before the Mac takes anything: nothing left half-fed
    Mac mac = perThread.get();
    mac.update(purpose);
    return HEX.formatHex(mac.doFinal(bytes));
  }

  private Mac cloneOfPrototype() {
    try {
      return (Mac) prototype.clone();
    } catch (CloneNotSupportedException e) {
      throw new IllegalStateException("HmacSHA256 of this JVM cannot be cloned", e);
    }
  }
}
