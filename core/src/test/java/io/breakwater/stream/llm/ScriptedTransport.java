package io.breakwater.stream.llm;

import io.breakwater.deadline.Deadline;
import io.breakwater.internal.stream.llm.Attempt;
import io.breakwater.internal.stream.llm.Transport;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A transport that plays a script per attempt, in virtual time: strings and byte arrays are body chunks, a
 * {@link Duration} waits (on {@code Schedulers.parallel()}, so {@code withVirtualTime} drives it), a
 * {@link Throwable} fails the body, {@link #NEVER} stalls it. It records every attempt, and the time its deadline had
 * left when it was opened.
 */
final class ScriptedTransport implements Transport {

  /** A step that never ends. */
  static final Object NEVER = new Object();

  final List<Attempt> attempts = new CopyOnWriteArrayList<>();
  final List<Duration> remaining = new CopyOnWriteArrayList<>();
  final List<Integer> cancelled = new CopyOnWriteArrayList<>();
  private final IntFunction<Object[]> script;

  private ScriptedTransport(IntFunction<Object[]> script) {
    this.script = script;
  }

  /** Attempt n plays {@code scripts[n - 1]}, the last one again for later attempts. */
  static ScriptedTransport of(Object[]... scripts) {
    return new ScriptedTransport(n -> scripts[Math.min(n, scripts.length) - 1]);
  }

  /** Every attempt plays {@code steps}. */
  static ScriptedTransport always(Object... steps) {
    return new ScriptedTransport(n -> steps);
  }

  static Object[] script(Object... steps) {
    return steps;
  }

  @Override
  public Flux<ByteBuf> open(Attempt attempt) {
    return Flux.deferContextual(ctx -> {
      attempts.add(attempt);
      remaining.add(Deadline.from(ctx).map(Deadline::remaining).orElse(Duration.ZERO));
      int number = attempt.number();
      return body(script.apply(number)).doOnCancel(() -> cancelled.add(number));
    });
  }

  static Flux<ByteBuf> body(Object... steps) {
    return Flux.fromArray(steps).concatMap(step -> {
      if (step instanceof Duration d) {
        return Mono.delay(d).then(Mono.<ByteBuf>empty());
      }
      if (step instanceof String s) {
        return Mono.just(Unpooled.wrappedBuffer(s.getBytes(StandardCharsets.UTF_8)));
      }
      if (step instanceof byte[] b) {
        return Mono.just(Unpooled.wrappedBuffer(b));
      }
      if (step instanceof Throwable t) {
        return Mono.<ByteBuf>error(t);
      }
      if (step == NEVER) {
        return Mono.<ByteBuf>never();
      }
      throw new IllegalArgumentException("unknown step " + step);
    }, 1);
  }

  /** {@code text} as UTF-8 chunks of 1 to 7 bytes, cut where {@code random} says (code points split too). */
  static Object[] chunked(String text, java.util.Random random) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    List<Object> chunks = new ArrayList<>();
    for (int i = 0; i < bytes.length; ) {
      int n = Math.min(bytes.length - i, 1 + random.nextInt(7));
      chunks.add(java.util.Arrays.copyOfRange(bytes, i, i + n));
      i += n;
    }
    return chunks.toArray();
  }
}
