package io.breakwater.benchmarks.stream;

import io.breakwater.stream.ServerSentEvents;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.springframework.core.ResolvableType;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ReactiveHttpInputMessage;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.http.codec.ServerSentEventHttpMessageReader;
import reactor.core.publisher.Flux;

/**
 * P5: SSE decode throughput, Breakwater's {@link ServerSentEvents} against Spring's
 * {@link ServerSentEventHttpMessageReader} (with {@code String} data) on the same bytes: 10 000 OpenAI-style chunk
 * events (CRLF and LF mixed, a comment every 100 events), cut into 8 KiB network chunks. The baseline only wraps and
 * counts the chunks. Scores are per event.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SseDecodeBenchmark {

  static final int EVENTS = 10_000;
  static final int CHUNK = 8 * 1024;

  private byte[][] chunks;
  private final DefaultDataBufferFactory factory = DefaultDataBufferFactory.sharedInstance;
  private final ServerSentEventHttpMessageReader spring = new ServerSentEventHttpMessageReader();
  private final ResolvableType eventOfString = ResolvableType.forClassWithGenerics(ServerSentEvent.class,
      String.class);

  @Setup
  public void bytes() {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < EVENTS; i++) {
      if (i % 100 == 0) {
        s.append(": keep-alive\n\n");
      }
      String eol = i % 2 == 0 ? "\n" : "\r\n";
      s.append("id: ").append(i).append(eol)
          .append("data: {\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,")
          .append("\"delta\":{\"content\":\" token").append(i).append(" é\"}}]}").append(eol).append(eol);
    }
    byte[] all = s.toString().getBytes(StandardCharsets.UTF_8);
    List<byte[]> list = new ArrayList<>();
    for (int i = 0; i < all.length; i += CHUNK) {
      list.add(Arrays.copyOfRange(all, i, Math.min(all.length, i + CHUNK)));
    }
    chunks = list.toArray(byte[][]::new);
    long breakwater = breakwater();
    long springCount = spring();
    if (breakwater != EVENTS || springCount != EVENTS) {
      throw new IllegalStateException("decoders disagree: breakwater " + breakwater + ", spring " + springCount);
    }
  }

  @Benchmark
  @OperationsPerInvocation(EVENTS)
  public long baselineChunksOnly() {
    return Flux.fromArray(chunks).map(Unpooled::wrappedBuffer).count().block();
  }

  @Benchmark
  @OperationsPerInvocation(EVENTS)
  public long breakwater() {
    return ServerSentEvents.decode(Flux.fromArray(chunks).map(Unpooled::wrappedBuffer)).count().block();
  }

  @Benchmark
  @OperationsPerInvocation(EVENTS)
  public long spring() {
    Flux<DataBuffer> body = Flux.fromArray(chunks).map(factory::wrap);
    ReactiveHttpInputMessage message = new ReactiveHttpInputMessage() {
      @Override
      public Flux<DataBuffer> getBody() {
        return body;
      }

      @Override
      public HttpHeaders getHeaders() {
        HttpHeaders headers = new HttpHeaders();
        headers.setContentType(MediaType.TEXT_EVENT_STREAM);
        return headers;
      }
    };
    return spring.read(eventOfString, message, Map.of())
        .filter(e -> ((ServerSentEvent<?>) e).data() != null)
        .count().block();
  }
}
