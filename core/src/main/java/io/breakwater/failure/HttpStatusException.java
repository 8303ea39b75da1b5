package io.breakwater.failure;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * A call answered with an HTTP error status. It carries the status and the response headers, so that a
 * {@link FailureClassifier} can classify it (429 is {@link FailureKind#RATE_LIMITED}, 5xx
 * {@link FailureKind#SERVER_ERROR}, 400 {@link FailureKind#INVALID_ARGUMENT}, …) and a retry can honour
 * {@code Retry-After}. Header names are case-insensitive.
 *
 * <pre>{@code
 * client.get().uri("/flights").responseSingle((res, body) -> res.status().code() >= 400
 *     ? Mono.error(new HttpStatusException(res.status().code(), headersOf(res)))
 *     : body.asString());
 * }</pre>
 *
 * <p>With Spring's {@code WebClient}, map error responses in {@code defaultStatusHandler} and pass
 * {@code response.headers().asHttpHeaders().asMultiValueMap()} (since Spring 7, {@code HttpHeaders} is no longer a
 * {@code Map}); docs/cookbook.md has both clients' recipes.
 */
public class HttpStatusException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final int status;
  private final transient @Nullable Map<String, List<String>> headers;   // not serialized

  /** An error status without headers. */
  public HttpStatusException(int status) {
    this(status, Map.of());
  }

  /** An error status with the response's headers (copied; names compared case-insensitively). */
  public HttpStatusException(int status, Map<String, ? extends List<String>> headers) {
    this(status, headers, null);
  }

  /**
   * An error status with the response's headers and a short description (e.g. the start of the body); the message
   * is {@code HTTP <status>: <detail>}.
   */
  public HttpStatusException(int status, Map<String, ? extends List<String>> headers, @Nullable String detail) {
    super("HTTP " + status + (detail == null || detail.isEmpty() ? "" : ": " + detail));
    if (status < 100 || status > 599) {
      throw new IllegalArgumentException("HTTP status " + status + " is not a status code: give 100 to 599");
    }
    this.status = status;
    TreeMap<String, List<String>> copy = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    Objects.requireNonNull(headers, "headers").forEach((name, values) -> copy.put(name, List.copyOf(values)));
    this.headers = Collections.unmodifiableMap(copy);
  }

  /** The HTTP status code. */
  public int status() {
    return status;
  }

  /** All response headers, by case-insensitive name; none on a deserialized copy. */
  public Map<String, List<String>> headers() {
    return headers == null ? Map.of() : headers;
  }

  /** The first value of a response header, if present. */
  public Optional<String> header(String name) {
    List<String> values = headers().get(name);
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }
}
