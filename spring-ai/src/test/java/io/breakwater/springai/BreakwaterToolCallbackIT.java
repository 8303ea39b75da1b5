package io.breakwater.springai;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.Breakwater;
import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.testing.llm.ScriptedModelServer;
import io.breakwater.testing.llm.ScriptedModelServer.Format;
import io.breakwater.testing.llm.ToolCallReplies;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.support.ToolCallbacks;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;

/**
 * Spring AI tools wrapped as Breakwater tools, through a real {@code ChatClient} on Spring AI's real OpenAI chat model
 * and its own tool-calling loop, against a loopback server that scripts the model's tool calls; what each tool call
 * returned is read in the request that carries it back to the model.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BreakwaterToolCallbackIT {

  private final ScriptedModelServer server = new ScriptedModelServer();
  private final TravelTools travel = new TravelTools();

  @AfterEach
  void stop() {
    travel.release.countDown();
    server.close();
  }

  /** The application's tools, as Spring AI users write them. */
  static final class TravelTools {
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicInteger lookups = new AtomicInteger();
    final AtomicInteger interrupted = new AtomicInteger();
    final AtomicInteger bookings = new AtomicInteger();

    @Tool(name = "weather_lookup", description = "The weather in a city")
    String weather(@ToolParam(description = "the city") String city) throws InterruptedException {
      lookups.incrementAndGet();
      try {
        release.await(30, TimeUnit.SECONDS);   // the weather service stalls
      } catch (InterruptedException e) {
        interrupted.incrementAndGet();
        throw e;
      }
      return "sunny in " + city;
    }

    @Tool(name = "book_flight", description = "Books a seat on a flight")
    String book(@ToolParam(description = "the flight number") String flight) {
      return "booked " + flight + " as B-" + bookings.incrementAndGet();
    }
  }

  private ToolCallback[] tools(Map<String, ToolDescriptor> descriptors) {
    return BreakwaterToolCallback.wrap(ToolCallbacks.from(travel), descriptors::get);
  }

  private ChatClient chat() {
    return ChatClient.create(SpringAiModels.model(Format.OPENAI, server.baseUrl(Format.OPENAI),
        new CancellableCalls()));
  }

  private static ToolDescriptor weather() {
    return ToolDescriptor.builder("weather_lookup").sideEffect(SideEffect.READ_ONLY)
        .timeouts(CallTimeouts.fixed(Duration.ofMillis(300)))
        .retry(RetryPolicy.builder().name("weather_lookup").maxRetries(0).build())
        .alternates("book_flight")
        .build();
  }

  private static ToolDescriptor booking(IdempotencyStore store) {
    return ToolDescriptor.builder("book_flight").sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
        .idempotency(IdempotencyPolicy.of(store))
        .idempotencyNamespace(ctx -> ctx.get("tenant"))
        .build();
  }

  /**
   * The text of each tool result the request {@code index} carries back to the model, in order (a {@code @Tool}
   * method's String result is written as a JSON string, quotes included).
   */
  private List<String> toolResults(int index) {
    Matcher m = Pattern.compile("\"role\":\"tool\"[^}]*?\"content\":\"((?:[^\"\\\\]|\\\\.)*)\"|"
        + "\"content\":\"((?:[^\"\\\\]|\\\\.)*)\"[^}]*?\"role\":\"tool\"").matcher(server.bodies().get(index));
    List<String> results = new java.util.ArrayList<>();
    while (m.find()) {
      results.add((m.group(1) != null ? m.group(1) : m.group(2)).replace("\\n", "\n").replace("\\\"", "\""));
    }
    return results;
  }

  @Test
  void aToolThatStallsIsCutAtItsTimeoutAndTheModelsNextRequestCarriesTheFailureFeedback() {
    server.then(ToolCallReplies.toolCall("call_1", "weather_lookup", "{\"city\":\"Lyon\"}"),
        ScriptedModelServer.tokens("No weather today"));
    ToolCallback[] tools = tools(Map.of("weather_lookup", weather(), "book_flight",
        booking(IdempotencyStore.inMemory())));

    long start = System.nanoTime();
    String answer = chat().prompt("Weather in Lyon?").toolCallbacks(tools).call().content();
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(answer).isEqualTo("No weather today");
    assertThat(travel.lookups).hasValue(1);
    assertThat(took).as("cut at 300 ms, not the 30 s stall").isLessThan(Duration.ofSeconds(10));
    assertThat(server.requests()).isEqualTo(2);
    assertThat(toolResults(1)).singleElement().satisfies(feedback -> assertThat(feedback)
        .startsWith("tool_failure: weather_lookup\nkind: timeout\n")
        .contains("next: call book_flight instead"));
    assertThat(travel.interrupted).as("the stalled tool's thread was interrupted").hasValue(1);
  }

  @Test
  void aNonIdempotentWriteCalledTwiceWithTheSameArgumentsRunsOnceAndTheRepeatGetsTheRecordedResult() {
    server.then(ToolCallReplies.toolCall("call_1", "book_flight", "{\"flight\":\"AF7641\"}"),
        ToolCallReplies.toolCall("call_2", "book_flight", "{ \"flight\" : \"AF7641\" }"),
        ScriptedModelServer.tokens("Booked"),
        ToolCallReplies.toolCall("call_3", "book_flight", "{\"flight\":\"AF7641\"}"),
        ScriptedModelServer.tokens("Booked too"));
    ToolCallback[] tools = tools(Map.of("weather_lookup", weather(), "book_flight",
        booking(IdempotencyStore.inMemory())));

    String first = chat().prompt("Book AF7641").toolCallbacks(tools).toolContext(Map.of("tenant", "acme"))
        .call().content();

    assertThat(first).isEqualTo("Booked");
    assertThat(travel.bookings).as("the repeat did not book again").hasValue(1);
    assertThat(toolResults(2)).containsExactly("\"booked AF7641 as B-1\"", "\"booked AF7641 as B-1\"");

    String other = chat().prompt("Book AF7641").toolCallbacks(tools).toolContext(Map.of("tenant", "globex"))
        .call().content();

    assertThat(other).isEqualTo("Booked too");
    assertThat(travel.bookings).as("another tenant's keys are in another namespace").hasValue(2);
    assertThat(toolResults(4)).containsExactly("\"booked AF7641 as B-2\"");
  }

  @Test
  void theTaskBudgetAroundAStreamReachesItsToolCalls() {
    server.then(ToolCallReplies.toolCall("call_1", "book_flight", "{\"flight\":\"AF7641\"}"),
        ToolCallReplies.toolCall("call_2", "book_flight", "{\"flight\":\"LH1077\"}"),
        ScriptedModelServer.tokens("One booked"));
    ToolCallback[] tools = tools(Map.of("weather_lookup", weather(), "book_flight",
        booking(IdempotencyStore.inMemory())));
    TaskBudget oneStep = TaskBudget.builder(Duration.ofSeconds(30)).name("booking").maxSteps(1).build();

    List<String> answer = chat().prompt("Book AF7641 and LH1077").toolCallbacks(tools)
        .toolContext(Map.of("tenant", "acme")).stream().content()
        .transformDeferred(Breakwater.withTaskBudget(oneStep))
        .collectList().block(Duration.ofSeconds(30));

    assertThat(String.join("", answer)).isEqualTo("One booked");
    assertThat(travel.bookings).hasValue(1);
    assertThat(toolResults(2)).hasSize(2).last().asString()
        .startsWith("tool_failure: book_flight\nkind: budget_exhausted\n");
  }
}
