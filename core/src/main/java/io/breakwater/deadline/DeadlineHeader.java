package io.breakwater.deadline;

import io.breakwater.Breakwater;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.http.ServerText;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * Carries the deadline over HTTP: the client sends the time remaining as a <em>relative</em> header, the server turns
 * it back into a {@link Deadline} that starts when the request arrives. Relative, as gRPC's {@code grpc-timeout}, so
 * the two clocks never have to agree. The value uses gRPC's format: at most 8 digits and a unit ({@code H} hours,
 * {@code M} minutes, {@code S} seconds, {@code m} milliseconds, {@code u} microseconds, {@code n} nanoseconds), e.g.
 * {@code Breakwater-Timeout: 2500m}. The value sent is rounded down, so the server never sees more time than the
 * client has.
 *
 * <pre>{@code
 * DeadlineHeader header = DeadlineHeader.standard();
 * HttpClient client = header.sendOn(HttpClient.create());       // every request carries the deadline
 * HttpServer.create().handle(header.honour((req, res) -> ...));  // handlers run under it
 * }</pre>
 *
 * <p>On the server, {@link #honour} answers {@code 400} to a malformed header and {@code 504} to a request whose
 * deadline has already passed, without calling the handler; a handler still running when the deadline passes is
 * cancelled and answered {@code 504} if it has not sent its headers yet. Requests without the header run unbounded.
 *
 * <p>The header is the caller's wish, not the server's policy: the server runs a request for at most
 * min(header, {@link #maximum(Duration) maximum}), by default 5 minutes, so that a
 * caller cannot give a handler (and the idempotency leases and key lifetimes checked against its deadline) more time
 * than the server allows. Answers are plain text and never quote the header's value.
 */
public final class DeadlineHeader {

  /** The header's default name. */
  public static final String DEFAULT_NAME = "Breakwater-Timeout";

  /** The longest deadline a server grants by default, whatever the header asks for: 5 minutes. */
  public static final Duration DEFAULT_MAXIMUM = Duration.ofMinutes(5);

  private static final int MAX_DIGITS_VALUE = 99_999_999;
  private static final String TEXT_PLAIN = "text/plain; charset=utf-8";

  private final String name;
  private final Supplier<Scheduler> scheduler;
  private final long maximumNanos;

  private DeadlineHeader(String name, Supplier<Scheduler> scheduler, long maximumNanos) {
    this.name = name;
    this.scheduler = scheduler;
    this.maximumNanos = maximumNanos;
  }

  /** The {@value #DEFAULT_NAME} header, with time from {@code Schedulers::parallel} and a 5-minute maximum. */
  public static DeadlineHeader standard() {
    return new DeadlineHeader(DEFAULT_NAME, Schedulers::parallel, DEFAULT_MAXIMUM.toNanos());
  }

  /** A header of another name, e.g. {@code grpc-timeout} to speak to a gRPC-aware proxy. */
  public static DeadlineHeader named(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("Deadline header name is blank: give an HTTP header name");
    }
    return new DeadlineHeader(name, Schedulers::parallel, DEFAULT_MAXIMUM.toNanos());
  }

  /** The same header, with the server-side deadline read from another scheduler (for tests in virtual time). */
  public DeadlineHeader scheduler(Supplier<Scheduler> scheduler) {
    return new DeadlineHeader(name, Objects.requireNonNull(scheduler, "scheduler"), maximumNanos);
  }

  /**
   * The same header, granting a request at most {@code maximum} on the server whatever its header asks for (default
   * {@link #DEFAULT_MAXIMUM}). Keep it below the TTL of the idempotency policies the handlers use.
   */
  public DeadlineHeader maximum(Duration maximum) {
    Objects.requireNonNull(maximum, "maximum");
    if (maximum.isNegative() || maximum.isZero()) {
      throw new IllegalArgumentException("Deadline header maximum is " + maximum + ": give a positive duration, e.g. "
          + "Duration.ofMinutes(5)");
    }
    return new DeadlineHeader(name, scheduler, Saturating.nanos(maximum));
  }

  public String name() {
    return name;
  }

  /** The longest deadline this server grants. */
  public Duration maximum() {
    return Duration.ofNanos(maximumNanos);
  }

  /**
   * {@code client}, sending the time remaining before the deadline in force (read from each request's Context)
   * with every request. Requests made outside any deadline are sent without the header.
   */
  public HttpClient sendOn(HttpClient client) {
    return client.doOnRequest((request, connection) -> Deadline.from(request.currentContextView())
        .ifPresent(deadline -> request.header(name, format(Math.max(0L, deadline.remainingNanos())))));
  }

  /**
   * {@code handler}, run under the deadline the request carries: the deadline is in its Context (read it with
   * {@link Deadline#from}) and bounds it, and it is never called for a request that has already expired.
   */
  public BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> honour(
      BiFunction<? super HttpServerRequest, ? super HttpServerResponse, ? extends Publisher<Void>> handler) {
    return (request, response) -> {
      String value = request.requestHeaders().get(name);
      if (value == null) {
        return handler.apply(request, response);
      }
      long remainingNanos;
      try {
        remainingNanos = Math.min(parse(value), maximumNanos);
      } catch (IllegalArgumentException malformed) {
        return response.status(400).header("Content-Type", TEXT_PLAIN).sendString(Mono.just("Malformed " + name
            + " header: expected 1 to 8 digits and a unit (H, M, S, m, u or n), e.g. 2500m"));
      }
      if (remainingNanos == 0) {
        return response.status(504).header("Content-Type", TEXT_PLAIN).sendString(Mono.just(
            "Deadline already expired on arrival (" + name + ")"));
      }
      DeadlineSpec spec = DeadlineSpec.builder(Duration.ofNanos(remainingNanos))
          .name("inbound " + name)
          .scheduler(scheduler)
          .build();
      return Flux.from(handler.apply(request, response))
          .transform(Breakwater.withDeadline(spec))
          .onErrorResume(DeadlineExceededException.class, e -> response.hasSentHeaders()
              ? Mono.error(e)
              : response.status(504).header("Content-Type", TEXT_PLAIN)
                  .sendString(Mono.just(String.valueOf(e.getMessage()))));
    };
  }

  /** Formats a remaining time in gRPC's timeout format, rounded down to the finest unit that fits 8 digits. */
  public static String format(Duration remaining) {
    return format(Math.max(0L, Saturating.nanos(remaining)));
  }

  static String format(long nanos) {
    if (nanos <= MAX_DIGITS_VALUE) {
      return nanos + "n";
    }
    long micros = TimeUnit.NANOSECONDS.toMicros(nanos);
    if (micros <= MAX_DIGITS_VALUE) {
      return micros + "u";
    }
    long millis = TimeUnit.NANOSECONDS.toMillis(nanos);
    if (millis <= MAX_DIGITS_VALUE) {
      return millis + "m";
    }
    long seconds = TimeUnit.NANOSECONDS.toSeconds(nanos);
    if (seconds <= MAX_DIGITS_VALUE) {
      return seconds + "S";
    }
    long minutes = TimeUnit.NANOSECONDS.toMinutes(nanos);
    if (minutes <= MAX_DIGITS_VALUE) {
      return minutes + "M";
    }
    return Math.min(TimeUnit.NANOSECONDS.toHours(nanos), MAX_DIGITS_VALUE) + "H";
  }

  /**
   * Parses a value in gRPC's timeout format into nanoseconds.
   *
   * @throws IllegalArgumentException saying what is wrong, for anything but 1 to 8 digits and one unit letter
   */
  public static long parse(String value) {
    int length = value.length();
    if (length < 2 || length > 9) {
      throw malformed(value);
    }
    long amount = 0;
    for (int i = 0; i < length - 1; i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') {
        throw malformed(value);
      }
      amount = amount * 10 + (c - '0');
    }
    TimeUnit unit = switch (value.charAt(length - 1)) {
      case 'H' -> TimeUnit.HOURS;
      case 'M' -> TimeUnit.MINUTES;
      case 'S' -> TimeUnit.SECONDS;
      case 'm' -> TimeUnit.MILLISECONDS;
      case 'u' -> TimeUnit.MICROSECONDS;
      case 'n' -> TimeUnit.NANOSECONDS;
      default -> throw malformed(value);
    };
    return unit.toNanos(amount);
  }

  private static IllegalArgumentException malformed(String value) {
    return new IllegalArgumentException("Malformed deadline header value '" + ServerText.quote(value)
        + "': expected 1 to 8 digits and a unit (H, M, S, m, u or n), e.g. 2500m");
  }
}
