package io.breakwater.internal.http;

import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.agent.Redactor;
import java.nio.charset.Charset;
import java.util.List;
import java.util.Map;

/**
 * The start of an error answer's body, as the detail of its {@link HttpStatusException}: at most
 * {@link #MAX_BYTES} bytes are read, the values of sensitive fields are masked, control characters escaped and the
 * text cut by {@link ServerText#quote}. Shared by every HTTP client adapter, so that all of them bound, redact and
 * escape alike.
 *
 * <p>Adapters hold the {@link #standard()} instance in a field: getting it loads the redactor's rules, which reads
 * class-path resources, and that must happen on the caller's thread, never on an event loop (BlockHound says so).
 */
public final class ErrorExcerpt {

  /** The most bytes of an error body that an adapter reads: 4 KiB. */
  public static final int MAX_BYTES = 4 * 1024;

  private static final ErrorExcerpt STANDARD = new ErrorExcerpt(new Redactor(List.of()));

  private final Redactor redactor;

  private ErrorExcerpt(Redactor redactor) {
    this.redactor = redactor;
  }

  /** The excerpt with Breakwater's default sensitive fields masked. */
  public static ErrorExcerpt standard() {
    return STANDARD;
  }

  /**
   * The failure for an answer with {@code status} and {@code headers} whose body started with {@code excerpt}
   * (possibly empty: the body was empty, or could not be read).
   */
  public HttpStatusException failure(int status, Map<String, ? extends List<String>> headers, byte[] excerpt,
      Charset charset) {
    return new HttpStatusException(status, headers, excerpt.length == 0 ? null
        : ServerText.quote(redactor.redactText(new String(excerpt, charset))));
  }
}
