package io.breakwater.benchmarks.stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.internal.stream.llm.LlmStreamEngine;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.ServerSentEvent;
import io.breakwater.stream.ServerSentEvents;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
import reactor.core.publisher.Flux;

/**
 * P12: assembling an LLM response against decoding the same stream. A 1 000-token OpenAI chat stream (a role delta,
 * 1 000 content chunks as the API sends them, a finish chunk, a usage chunk, {@code [DONE]}), cut into 8 KiB network
 * chunks. Scores are per event.
 *
 * <ul>
 *   <li>{@code decode} (the baseline): what any client must do — SSE decoding (with comments, as the client decodes)
 *       and parsing each event's JSON with Jackson.</li>
 *   <li>{@code deltas}: the whole {@code LlmStreamClient} call on those bytes (its transport replaced by the
 *       buffers): typed deltas, the call's timers, its retry operator, its deadline and the partial response it
 *       keeps for a truncation.</li>
 *   <li>{@code assemble}: the same call assembled by {@code LlmResponse.aggregate}.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LlmAssembleBenchmark {

  static final int TOKENS = 1_000;
  static final int EVENTS = TOKENS + 4;
  static final int CHUNK = 8 * 1024;

  private byte[][] chunks;
  private final ObjectMapper mapper = new ObjectMapper();
  private final ServerSentEvents sse = ServerSentEvents.builder().comments(true).build();
  private LlmStreamEngine engine;

  @Setup
  public void setUp() {
    String head = "data: {\"id\":\"chatcmpl-AbC123xyz\",\"object\":\"chat.completion.chunk\",\"created\":1730000000,"
        + "\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\",\"choices\":[{\"index\":0,"
        + "\"delta\":";
    String tail = ",\"logprobs\":null,\"finish_reason\":null}]}\n\n";
    StringBuilder s = new StringBuilder(head).append("{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}")
        .append(tail);
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < TOKENS; i++) {
      s.append(head).append("{\"content\":\" tok").append(i % 97).append("\"}").append(tail);
      text.append(" tok").append(i % 97);
    }
    s.append(head).append("{}").append(tail.replace("\"finish_reason\":null", "\"finish_reason\":\"stop\""))
        .append("data: {\"id\":\"chatcmpl-AbC123xyz\",\"object\":\"chat.completion.chunk\",\"created\":1730000000,")
        .append("\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[],\"usage\":{\"prompt_tokens\":20,")
        .append("\"completion_tokens\":1000,\"total_tokens\":1020}}\n\n")
        .append("data: [DONE]\n\n");
    byte[] all = s.toString().getBytes(StandardCharsets.UTF_8);
    List<byte[]> list = new ArrayList<>();
    for (int i = 0; i < all.length; i += CHUNK) {
      list.add(Arrays.copyOfRange(all, i, Math.min(all.length, i + CHUNK)));
    }
    chunks = list.toArray(byte[][]::new);

    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    LlmStreamEngine.Settings settings = new LlmStreamEngine.Settings();
    settings.dialect = Dialect.OPENAI_CHAT;
    settings.mapper = mapper;
    settings.transport = attempt -> Flux.fromArray(chunks).map(Unpooled::wrappedBuffer);
    settings.maxEventBytes = 1024 * 1024;
    settings.timeouts = StreamTimeouts.builder().firstItemFromDeadline().idleFromDeadline().meterRegistry(meters)
        .build();
    settings.retry = RetryPolicy.builder().name("p12").maxRetries(2).budget(RetryBudget.unlimited())
        .meterRegistry(meters).build();
    settings.maxDuration = Duration.ofMinutes(10);
    settings.maxResponseBytes = 4L * 1024 * 1024;
    settings.meterRegistry = meters;
    settings.headers = Map.of();
    engine = new LlmStreamEngine(settings);

    long parsed = decode();
    int length = assemble();
    if (parsed != EVENTS - 1 || length != text.length() || deltas() != TOKENS + 4) {   // metadata, texts, finish, usage, done
      throw new IllegalStateException("decoded " + parsed + " events, assembled " + length + " of " + text.length()
          + " chars, " + deltas() + " deltas");
    }
  }

  @Benchmark
  @OperationsPerInvocation(EVENTS)
  public long decode() {
    return sse.events(Flux.fromArray(chunks).map(Unpooled::wrappedBuffer))
        .filter(e -> !e.isHeartbeat() && !e.data().equals("[DONE]"))
        .map(this::parse)
        .count().block();
  }

  @Benchmark
  @OperationsPerInvocation(EVENTS)
  public long deltas() {
    return engine.stream(new byte[0]).count().block();
  }

  @Benchmark
  @OperationsPerInvocation(EVENTS)
  public int assemble() {
    return engine.stream(new byte[0]).as(LlmResponse::aggregate).block().text().length();
  }

  private JsonNode parse(ServerSentEvent event) {
    try {
      return mapper.readTree(event.data());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
