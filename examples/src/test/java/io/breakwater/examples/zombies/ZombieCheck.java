package io.breakwater.examples.zombies;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The zombie test every streaming recipe passes: {@value #STREAMS} streams run at once against a
 * {@link WalkAwayServer} that stalls them, each is cancelled by its own timeout (a recipe that retries a stream
 * without a first token sends more requests, each cancelled the same way), and then
 *
 * <ul>
 *   <li>every connection the client opened is closed at the server within 1 s of the last timeout — no request is
 *       left running for a caller who walked away;</li>
 *   <li>no thread of the client is still inside one of those calls (a blocking client's reader or dispatcher
 *       thread), checked by the frames the client's threads would show.</li>
 * </ul>
 */
public final class ZombieCheck {

  public static final int STREAMS = 20;

  /** The most time between the last timeout and the last connection closed at the server. */
  public static final Duration CLOSE_WITHIN = Duration.ofSeconds(1);

  private ZombieCheck() {}

  /**
   * Runs the zombie test against a {@link WalkAwayServer} that stalls as {@code stall} says: after two tokens each
   * stream must end with an {@code IdleTimeoutException}, before them with a {@code FirstItemTimeoutException}.
   *
   * @param stream a guarded stream of the recipe, against the server it is given
   */
  public static void everyStalledStreamIsClosed(WalkAwayServer.Stall stall, Function<WalkAwayServer, Flux<?>> stream,
      String... callFrames) throws InterruptedException {
    try (WalkAwayServer server = new WalkAwayServer(stall)) {
      everyStalledStreamIsClosed(server, () -> stream.apply(server),
          stall == WalkAwayServer.Stall.AFTER_TWO_TOKENS ? IdleTimeoutException.class : FirstItemTimeoutException.class,
          callFrames);
    }
  }

  /**
   * Runs {@value #STREAMS} subscriptions of {@code stream} at once; each must end with {@code timeout} (itself or as a
   * cause, e.g. of the retry's {@code RetryExhaustedException}); then checks the server and the threads.
   *
   * @param callFrames prefixes of the stack frames of a thread that is inside a call of the client (say
   *     {@code "okhttp3.internal.connection.RealCall"}); none for a non-blocking client
   */
  public static void everyStalledStreamIsClosed(WalkAwayServer server, Supplier<Flux<?>> stream,
      Class<? extends Throwable> timeout, String... callFrames) throws InterruptedException {
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    List<Long> timedOutNanos = new CopyOnWriteArrayList<>();
    long start = System.nanoTime();
    List<Mono<Void>> streams = new ArrayList<>();
    for (int i = 0; i < STREAMS; i++) {
      streams.add(Flux.defer(() -> stream.get()).then()
          .onErrorResume(e -> {
            timedOutNanos.add(System.nanoTime());
            errors.add(e);
            return Mono.empty();
          }));
    }
    Mono.when(streams).block(Duration.ofSeconds(90));

    assertThat(errors).as("every stream ended by its timeout").hasSize(STREAMS)
        .allSatisfy(e -> assertThat(causes(e)).as(e.toString()).anyMatch(timeout::isInstance));
    int requests = server.requests();
    assertThat(requests).as("at least one request per stream").isGreaterThanOrEqualTo(STREAMS);

    long lastTimeout = timedOutNanos.stream().mapToLong(Long::longValue).max().orElseThrow();
    long bound = lastTimeout + CLOSE_WITHIN.toNanos();
    while (server.closedNanos().size() < requests && System.nanoTime() < bound) {
      Thread.sleep(10);
    }
    List<Long> closed = server.closedNanos();
    assertThat(closed).as("connections of the " + requests + " requests closed at the server within "
            + CLOSE_WITHIN + " of the last timeout")
        .hasSize(requests)
        .allSatisfy(at -> assertThat(at).isBetween(start, bound));

    List<String> inCalls = threadsInCalls(callFrames);
    for (int i = 0; i < 100 && !inCalls.isEmpty(); i++) {   // a thread may take a moment to see its socket closed
      Thread.sleep(10);
      inCalls = threadsInCalls(callFrames);
    }
    assertThat(inCalls).as("threads still inside a call of the client").isEmpty();
  }

  /**
   * Runs one stream of the client to its first item, with no timeout of Breakwater's: a client's first call in a JVM
   * loads its classes, which can take seconds on a busy machine, and the zombie test times streams, not that.
   */
  public static void warmUp(Function<WalkAwayServer, Flux<?>> stream) {
    try (WalkAwayServer server = new WalkAwayServer(WalkAwayServer.Stall.AFTER_TWO_TOKENS)) {
      stream.apply(server).take(1).blockLast(Duration.ofSeconds(60));
    }
  }

  /** The threads with a frame that starts with one of {@code callFrames}, with their stacks. */
  public static List<String> threadsInCalls(String... callFrames) {
    List<String> found = new ArrayList<>();
    for (Map.Entry<Thread, StackTraceElement[]> thread : Thread.getAllStackTraces().entrySet()) {
      boolean inCall = Arrays.stream(thread.getValue()).anyMatch(frame -> Arrays.stream(callFrames)
          .anyMatch(prefix -> (frame.getClassName() + "." + frame.getMethodName()).startsWith(prefix)));
      if (inCall) {
        found.add(thread.getKey().getName() + " " + Arrays.toString(thread.getValue()));
      }
    }
    return found;
  }

  private static List<Throwable> causes(Throwable error) {
    List<Throwable> chain = new ArrayList<>();
    for (Throwable t = error; t != null && !chain.contains(t); t = t.getCause()) {
      chain.add(t);
    }
    return chain;
  }
}
