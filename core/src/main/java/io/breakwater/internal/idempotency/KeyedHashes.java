package io.breakwater.internal.idempotency;

import io.breakwater.idempotency.IdempotencyKey;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA-256 under a per-deployment secret, for what an idempotency store and logs see of a key: the store key, the
 * stored fingerprint, and a short tag for messages. Without the secret, none of them can be recomputed from guessed
 * arguments. Each use clones a {@link Mac} made once, so no provider is looked up on a call's thread.
 */
public final class KeyedHashes {

  private static final HexFormat HEX = HexFormat.of();

  /** Hex digits of the tag shown in messages and logs: 32 bits, enough to tell keys apart in one incident. */
  private static final int TAG_HEX_DIGITS = 8;

  private final Mac prototype;

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
    return key.namespace() + ":" + key.tool() + (key.isExplicit() ? ":key:" : ":args:") + hmac("key", key.value());
  }

  /** The keyed fingerprint of the key's payload. */
  public String storeFingerprint(IdempotencyKey key) {
    return hmac("fingerprint", key.fingerprint());
  }

  /** {@code namespace:tool:#<8 hex digits>}: tells keys apart in messages and logs, and gives nothing away. */
  public String tag(IdempotencyKey key) {
    return key.namespace() + ":" + key.tool() + ":#" + hmac("tag", key.value()).substring(0, TAG_HEX_DIGITS);
  }

  private String hmac(String purpose, String text) {
    Mac mac;
    try {
      mac = (Mac) prototype.clone();
    } catch (CloneNotSupportedException e) {
      throw new IllegalStateException("HmacSHA256 of this JVM cannot be cloned", e);
    }
    mac.update(purpose.getBytes(StandardCharsets.US_ASCII));
    mac.update((byte) 0);
    return HEX.formatHex(mac.doFinal(text.getBytes(StandardCharsets.UTF_8)));
  }
}
