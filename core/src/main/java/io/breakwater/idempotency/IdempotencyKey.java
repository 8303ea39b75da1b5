package io.breakwater.idempotency;

import io.breakwater.internal.Saturating;
import io.breakwater.internal.idempotency.CanonicalJson;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Names one side effect, so that it happens at most once: the same key means the same request.
 *
 * <p>A key derived from arguments is {@code namespace:tool:sha256:<hex>}, where {@code <hex>} is the SHA-256 of the
 * arguments' canonical JSON: object keys sorted, numbers normalised ({@code 1}, {@code 1.0} and {@code 1.00} are
 * equal), no white space, UTF-8. The form depends on no serializer setting, so keys are stable across JVMs and
 * versions (golden vectors in the tests prove it).
 *
 * <pre>{@code
 * IdempotencyKey key = IdempotencyKey.builder("orders.cancel")
 *     .namespace(tenantId)                        // tenants never share results
 *     .args(request)
 *     .excluding("requestId", "traceId")          // transient fields do not make requests different
 *     .quantise("clientTime", Duration.ofMinutes(5))
 *     .unorderedArrays("items")                   // [a, b] equals [b, a] for this field
 *     .build();
 *
 * IdempotencyKey byOrder = IdempotencyKey.explicit("orders.cancel", orderId, request);
 * }</pre>
 *
 * <p>An {@link #explicit} key is the caller's own (an order id): {@code namespace:tool:key:<clientKey>}. The payload
 * is still fingerprinted, and a second call with the same key but a different payload is refused with
 * {@link IdempotencyKeyMismatchException}. A client key is at most 256 characters, printable (no control or
 * formatting characters, no line separators) and without braces; its payload can leave out transient fields too:
 * {@code IdempotencyKey.builder("orders.cancel").clientKey(orderId).args(request).excluding("requestId").build()}.
 *
 * <p>{@link #value()} and {@link #fingerprint()} are the key's plain form: a derived key's hash is an <i>unkeyed</i>
 * SHA-256 of the arguments, which a low-entropy argument (a PIN) could be guessed from. Keep them out of logs.
 * {@code idempotentBy} never sends them anywhere: its store gets keyed hashes (HMAC-SHA-256 under the policy's
 * secret, {@link IdempotencyPolicy#storeKey}), its messages and logs show a short keyed tag
 * ({@link IdempotencyPolicy#tag}), and dependencies get the key's keyed form ({@link IdempotencyPolicy#sentKey}).
 *
 * <p>Field names given to {@code excluding}, {@code quantise} and {@code unorderedArrays} match a field of that name
 * at any depth; a dotted path ({@code "order.requestId"}) matches only that field.
 *
 * <p>Keys are immutable and thread-safe; {@link #toString()} shows the namespace and tool only, never the arguments,
 * their hash or the client key.
 */
public final class IdempotencyKey {

  /** The namespace of keys that are not given one. */
  public static final String DEFAULT_NAMESPACE = "default";

  /** The longest client key accepted by {@link #explicit}. */
  public static final int MAX_CLIENT_KEY_LENGTH = 256;

  /** The longest namespace or tool name accepted. */
  public static final int MAX_NAME_LENGTH = 128;

  private final String namespace;
  private final String tool;
  private final String value;
  private final String fingerprint;
  private final boolean explicit;

  private IdempotencyKey(String namespace, String tool, String value, String fingerprint, boolean explicit) {
    this.namespace = namespace;
    this.tool = tool;
    this.value = value;
    this.fingerprint = fingerprint;
    this.explicit = explicit;
  }

  /** A key derived from all of {@code args}, in the default namespace. */
  public static IdempotencyKey of(String tool, Object args) {
    return builder(tool).args(args).build();
  }

  /** A builder for a key derived from arguments, with exclusions, a namespace and normalisations. */
  public static Builder builder(String tool) {
    return new Builder(tool);
  }

  /** A key the caller gives (e.g. an order id), in the default namespace, with {@code payload} fingerprinted. */
  public static IdempotencyKey explicit(String tool, String clientKey, Object payload) {
    return explicit(DEFAULT_NAMESPACE, tool, clientKey, payload);
  }

  /** A key the caller gives, in {@code namespace} (e.g. the tenant), with {@code payload} fingerprinted. */
  public static IdempotencyKey explicit(String namespace, String tool, String clientKey, Object payload) {
    return builder(tool).namespace(namespace).clientKey(clientKey).args(payload).build();
  }

  /**
   * The key's plain form: {@code namespace:tool:sha256:<hex>} or {@code namespace:tool:key:<clientKey>}. Not what the
   * store is asked for (that is {@link IdempotencyPolicy#storeKey}); keep it out of logs.
   */
  public String value() {
    return value;
  }

  /**
   * The unkeyed SHA-256 of the canonical payload: equal keys with different fingerprints are a mismatch. The store
   * gets a keyed form of it ({@link IdempotencyPolicy#storeFingerprint}).
   */
  public String fingerprint() {
    return fingerprint;
  }

  /** Whether the key is the caller's own ({@link #explicit}, or {@link Builder#clientKey}) rather than derived. */
  public boolean isExplicit() {
    return explicit;
  }

  public String namespace() {
    return namespace;
  }

  public String tool() {
    return tool;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IdempotencyKey other && value.equals(other.value) && fingerprint.equals(other.fingerprint);
  }

  @Override
  public int hashCode() {
    return value.hashCode() * 31 + fingerprint.hashCode();
  }

  /** The namespace and tool, never the arguments, their hash or the client key: {@code acme:payments.refund:…}. */
  @Override
  public String toString() {
    return namespace + ":" + tool + ":…";
  }

  private static void checkName(String what, String name) {
    Objects.requireNonNull(name, what);
    if (name.isBlank() || name.length() > MAX_NAME_LENGTH || !plainName(name)) {
      throw new IdempotencyKeyException("Idempotency " + what + " (" + name.length() + " characters) is blank, "
          + "longer than " + MAX_NAME_LENGTH + " characters, or contains ':', a brace, white space or a character "
          + "that does not print: use a plain name such as 'orders.cancel'");
    }
  }

  /** No white space, colon, brace or character that does not print. */
  private static boolean plainName(String name) {
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c <= ' ' || c == ':' || c == '{' || c == '}' || !printable(c)) {
        return false;
      }
    }
    return true;
  }

  private static void checkClientKey(String tool, String clientKey) {
    Objects.requireNonNull(clientKey, "clientKey");
    if (clientKey.isBlank()) {
      throw new IdempotencyKeyException("Explicit idempotency key for '" + tool + "' is blank: pass the id that "
          + "names the request, e.g. the order id");
    }
    if (clientKey.length() > MAX_CLIENT_KEY_LENGTH) {
      throw new IdempotencyKeyException("Explicit idempotency key for '" + tool + "' is " + clientKey.length()
          + " characters, over " + MAX_CLIENT_KEY_LENGTH + ": pass a short id that names the request (the order "
          + "id), not the request itself");
    }
    for (int i = 0; i < clientKey.length(); i++) {
      char c = clientKey.charAt(i);
      boolean paired = Character.isHighSurrogate(c) && i + 1 < clientKey.length()
          && Character.isLowSurrogate(clientKey.charAt(i + 1));
      if (paired) {
        i++;
      } else if (c == '{' || c == '}' || !printable(c)) {
        throw new IdempotencyKeyException("Explicit idempotency key for '" + tool + "' has a brace or a character "
            + "that does not print (a control character, line break or formatting mark) at index " + i + ": pass "
            + "an id of printable characters without braces");
      }
    }
  }

  /** Not a control, formatting, separator-of-lines or unpaired surrogate character. */
  private static boolean printable(char c) {
    int type = Character.getType(c);
    return !Character.isISOControl(c) && type != Character.FORMAT && type != Character.LINE_SEPARATOR
        && type != Character.PARAGRAPH_SEPARATOR && type != Character.SURROGATE && type != Character.UNASSIGNED
        && type != Character.PRIVATE_USE;
  }

  /** Builds a key derived from arguments. */
  public static final class Builder {
    private final String tool;
    private String namespace = DEFAULT_NAMESPACE;
    private @Nullable String clientKey;
    private @Nullable Object args;
    private boolean argsSet;
    private final Set<String> excluded = new LinkedHashSet<>();
    private final Map<String, Long> quantised = new HashMap<>();
    private final Set<String> unordered = new LinkedHashSet<>();

    private Builder(String tool) {
      this.tool = tool;
    }

    /** The arguments: a {@code Map}, a record, a bean or a Jackson {@code JsonNode}. */
    public Builder args(@Nullable Object args) {
      this.args = args;
      this.argsSet = true;
      return this;
    }

    /** Fields left out of the key: request ids, trace ids, client timestamps. */
    public Builder excluding(String... transientFields) {
      excluded.addAll(Arrays.asList(transientFields));
      return this;
    }

    /**
     * Makes this an explicit key: the caller's own id for the request (an order id), at most 256 printable
     * characters without braces. The arguments are then the payload, fingerprinted with the same rules (exclusions,
     * buckets, unordered arrays), so that a transient field does not make a retry a mismatch.
     */
    public Builder clientKey(String clientKey) {
      this.clientKey = Objects.requireNonNull(clientKey, "clientKey");
      return this;
    }

    /** The namespace, e.g. the tenant: the same arguments in two namespaces are two keys. */
    public Builder namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }

    /**
     * Rounds a time field (epoch milliseconds or an ISO-8601 instant) down to the start of its {@code bucket}, so that
     * retries a little later still make the same key.
     */
    public Builder quantise(String timeField, Duration bucket) {
      Objects.requireNonNull(timeField, "timeField");
      if (bucket.compareTo(Duration.ofMillis(1)) < 0) {
        throw new IdempotencyKeyException("Quantisation bucket for '" + timeField + "' is " + bucket
            + ": give at least one millisecond");
      }
      quantised.put(timeField, Saturating.millis(bucket));   // saturated past 292 million years, not thrown
      return this;
    }

    /** Arrays under these fields are sets: their order does not change the key. Opt-in, field by field. */
    public Builder unorderedArrays(String... fields) {
      if (fields.length == 0) {
        throw new IdempotencyKeyException("unorderedArrays() names no field: name the array fields whose order "
            + "does not matter");
      }
      unordered.addAll(Arrays.asList(fields));
      return this;
    }

    public IdempotencyKey build() {
      checkName("namespace", namespace);
      checkName("tool", tool);
      if (clientKey != null) {
        checkClientKey(tool, clientKey);
      }
      if (!argsSet) {
        throw new IdempotencyKeyException("Idempotency key for '" + tool + "' has no arguments: call args(..), or "
            + "use IdempotencyKey.explicit(tool, clientKey, payload)");
      }
      CanonicalJson.Rules rules = excluded.isEmpty() && quantised.isEmpty() && unordered.isEmpty()
          ? CanonicalJson.Rules.NONE
          : new CanonicalJson.Rules(Set.copyOf(excluded), Map.copyOf(quantised), Set.copyOf(unordered));
      String hash = CanonicalJson.sha256(CanonicalJson.write(args, rules));
      if (clientKey != null) {
        return new IdempotencyKey(namespace, tool, namespace + ":" + tool + ":key:" + clientKey, hash, true);
      }
      return new IdempotencyKey(namespace, tool, namespace + ":" + tool + ":sha256:" + hash, hash, false);
    }
  }
}
