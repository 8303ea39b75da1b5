package io.breakwater.internal.idempotency;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The owner (fencing) tokens of idempotency claims: 128 bits from a {@link SecureRandom} DRBG, so that tokens seen
 * ({@code IdempotencyContext.ownerToken()}, a store's contents) do not predict the next one (two outputs of
 * {@code ThreadLocalRandom} give away its state). The generator is seeded when this class is initialised, which
 * {@link #seed()} does on the caller's thread when a policy is built: seeding reads the system's entropy source, a
 * blocking read that must not happen on an event loop; after it, a token is computed without I/O.
 */
public final class OwnerTokens {

  private static final SecureRandom RANDOM = seeded();

  private OwnerTokens() {}

  /** Seeds the generator now, if it was not already (called from {@code IdempotencyPolicy.Builder.build()}). */
  public static void seed() {
    // initialising the class did it
  }

  /** A new token: 32 hex digits. */
  static String next() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  private static SecureRandom seeded() {
    SecureRandom random;
    try {
      random = SecureRandom.getInstance("DRBG");
    } catch (NoSuchAlgorithmException absent) {
      random = new SecureRandom();
    }
    random.nextBytes(new byte[16]);   // a DRBG seeds itself at its first use: here, not on the first claim's thread
    return random;
  }
}
