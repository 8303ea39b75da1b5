package io.breakwater.idempotency;

import io.breakwater.internal.idempotency.CanonicalJson;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

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
 * {@link IdempotencyKeyMismatchException}.
 *
 * <p>Field names given to {@code excluding}, {@code quantise} and {@code unorderedArrays} match a field of that name
 * at any depth; a dotted path ({@code "order.requestId"}) matches only that field.
 *
 * <p>Keys are immutable and thread-safe; {@link #toString()} shows the key, never the arguments.
 */
public final class IdempotencyKey {

  /** The namespace of keys that are not given one. */
  public static final String DEFAULT_NAMESPACE = "default";

  private final String namespace;
  private final String tool;
  private final String value;
  private final String fingerprint;

  private IdempotencyKey(String namespace, String tool, String value, String fingerprint) {
    this.namespace = namespace;
    this.tool = tool;
    this.value = value;
    this.fingerprint = fingerprint;
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
    checkName("namespace", namespace);
    checkName("tool", tool);
    Objects.requireNonNull(clientKey, "clientKey");
    if (clientKey.isEmpty()) {
      throw new IdempotencyKeyException("Explicit idempotency key for '" + tool + "' is empty: pass the id that "
          + "names the request, e.g. the order id");
    }
    String fingerprint = CanonicalJson.sha256(CanonicalJson.write(payload, CanonicalJson.Rules.NONE));
    return new IdempotencyKey(namespace, tool, namespace + ":" + tool + ":key:" + clientKey, fingerprint);
  }

  /** The key string the store is asked for. */
  public String value() {
    return value;
  }

  /** The SHA-256 of the canonical payload: equal keys with different fingerprints are a mismatch. */
  public String fingerprint() {
    return fingerprint;
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

  @Override
  public String toString() {
    return value;
  }

  private static void checkName(String what, String name) {
    Objects.requireNonNull(name, what);
    if (name.isBlank() || name.indexOf(':') >= 0 || name.chars().anyMatch(c -> c <= ' ')) {
      throw new IdempotencyKeyException("Idempotency " + what + " '" + name
          + "' is blank or contains ':' or white space: use a plain name such as 'orders.cancel'");
    }
  }

  /** Builds a key derived from arguments. */
  public static final class Builder {
    private final String tool;
    private String namespace = DEFAULT_NAMESPACE;
    private Object args;
    private boolean argsSet;
    private final Set<String> excluded = new LinkedHashSet<>();
    private final Map<String, Long> quantised = new HashMap<>();
    private final Set<String> unordered = new LinkedHashSet<>();

    private Builder(String tool) {
      this.tool = tool;
    }

    /** The arguments: a {@code Map}, a record, a bean or a Jackson {@code JsonNode}. */
    public Builder args(Object args) {
      this.args = args;
      this.argsSet = true;
      return this;
    }

    /** Fields left out of the key: request ids, trace ids, client timestamps. */
    public Builder excluding(String... transientFields) {
      excluded.addAll(Arrays.asList(transientFields));
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
      if (bucket.toMillis() <= 0) {
        throw new IdempotencyKeyException("Quantisation bucket for '" + timeField + "' is " + bucket
            + ": give at least one millisecond");
      }
      quantised.put(timeField, bucket.toMillis());
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
      if (!argsSet) {
        throw new IdempotencyKeyException("Idempotency key for '" + tool + "' has no arguments: call args(..), or "
            + "use IdempotencyKey.explicit(tool, clientKey, payload)");
      }
      CanonicalJson.Rules rules = new CanonicalJson.Rules(Set.copyOf(excluded), Map.copyOf(quantised),
          Set.copyOf(unordered));
      String hash = CanonicalJson.sha256(CanonicalJson.write(args, rules));
      return new IdempotencyKey(namespace, tool, namespace + ":" + tool + ":sha256:" + hash, hash);
    }
  }
}
