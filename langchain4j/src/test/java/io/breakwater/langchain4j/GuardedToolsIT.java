package io.breakwater.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.UserMessage;
import io.breakwater.Breakwater;
import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.llm.LlmGuard;
import io.breakwater.testing.llm.ScriptedModelServer;
import io.breakwater.testing.llm.ScriptedModelServer.Format;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * Tools guarded by {@link ToolGuard} in a real AI Service, on LangChain4j's real OpenAI chat model (guarded too),
 * against a loopback server that scripts the model's tool calls and records what the model is sent next.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GuardedToolsIT {

  private static final String TENANT = "tenant";

  private final ScriptedModelServer server = new ScriptedModelServer();

  @AfterEach
  void stop() {
    server.close();
  }

  interface Assistant {
    String chat(@UserMessage String message, InvocationParameters parameters);
  }

  /** A flight search that never answers until it is interrupted. */
  static final class StallingSearch {
    final CountDownLatch interrupted = new CountDownLatch(1);

    @Tool("Searches flights to a city")
    String searchFlights(String city) {
      try {
        new CountDownLatch(1).await(30, TimeUnit.SECONDS);
        return "flights to " + city;
      } catch (InterruptedException e) {
        interrupted.countDown();
        Thread.currentThread().interrupt();
        return "interrupted";
      }
    }
  }

  /** A flight search that answers at once. */
  static final class Search {
    @Tool("Searches flights to a city")
    String searchFlights(String city) {
      return "AF123 to " + city;
    }
  }

  /** A booking API that books again at each call: a non-idempotent write. */
  static final class Bookings {
    final AtomicInteger made = new AtomicInteger();

    @Tool("Books a seat on a flight for a passenger")
    String bookFlight(String flight, String passenger) {
      return "booking B-" + made.incrementAndGet() + ": " + passenger + " on " + flight;
    }
  }

  private static Assistant assistant(ScriptedModelServer server, ToolGuard guard, Object tools) {
    ChatModel openAi = OpenAiChatModel.builder().baseUrl(server.baseUrl(Format.OPENAI)).apiKey("not-needed-locally")
        .modelName("local").maxRetries(0).timeout(Duration.ofSeconds(30)).build();
    return AiServices.builder(Assistant.class)
        .chatModel(ModelGuard.of(LlmGuard.builder("local-tools").build()).guard(openAi))
        .tools(guard.tools(tools))
        .build();
  }

  private Assistant assistant(ToolGuard guard, Object tools) {
    return assistant(server, guard, tools);
  }

  /** LangChain4j's first AI Service call in a JVM loads its classes: one first, untimed. */
  @BeforeAll
  static void warmUp() {
    try (ScriptedModelServer warm = new ScriptedModelServer()) {
      warm.then(ScriptedModelServer.toolCall("call_0", "searchFlights", "{\"city\":\"Lyon\"}"));
      ToolGuard guard = ToolGuard.builder()
          .tool(ToolDescriptor.builder("searchFlights").sideEffect(SideEffect.READ_ONLY).build()).build();
      assistant(warm, guard, new Search()).chat("warm up", new InvocationParameters());
    }
  }

  @Test
  void aToolThatStallsIsCutAtItsTimeoutAndTheModelsNextRequestCarriesTheFailureFeedback() throws InterruptedException {
    server.then(ScriptedModelServer.toolCall("call_1", "searchFlights", "{\"city\":\"Lyon\"}"),
        ScriptedModelServer.tokens("No flight found in time"));
    StallingSearch search = new StallingSearch();
    ToolGuard guard = ToolGuard.builder()
        .tool(ToolDescriptor.builder("searchFlights").sideEffect(SideEffect.READ_ONLY)
            .timeouts(CallTimeouts.fixed(Duration.ofMillis(300)))
            .retry(RetryPolicy.builder().name("searchFlights").maxRetries(0).build())
            .alternates("searchTrains")
            .build())
        .build();

    long start = System.nanoTime();
    String answer = assistant(guard, search).chat("Find me a flight to Lyon", new InvocationParameters());
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(answer).isEqualTo("No flight found in time");
    assertThat(took).as("cut at 300 ms, not the tool's 30 s").isLessThan(Duration.ofSeconds(10));
    assertThat(server.requests()).isEqualTo(2);
    List<String> fedBack = server.toolResults(1);
    assertThat(fedBack).hasSize(1);
    assertThat(fedBack.get(0)).isEqualTo("""
        tool_failure: searchFlights
        kind: timeout
        reason: no answer within 300ms
        next: call searchTrains instead; or continue without this result; or call searchFlights once more later if \
        the result is essential
        avoid: calling searchFlights again with the same arguments right away
        budget left: unlimited""");
    assertThat(search.interrupted.await(5, TimeUnit.SECONDS)).as("the stalled tool's thread was interrupted").isTrue();
  }

  @Test
  void aNonIdempotentWriteCalledTwiceWithTheSameArgumentsInOneTaskRunsOnce() throws InterruptedException {
    String arguments = "{\"flight\":\"AF123\",\"passenger\":\"Ada\"}";
    server.then(ScriptedModelServer.toolCall("call_1", "bookFlight", arguments), ScriptedModelServer.toolCall("call_2", "bookFlight", arguments),
        ScriptedModelServer.tokens("Booked"),
        ScriptedModelServer.toolCall("call_3", "bookFlight", arguments), ScriptedModelServer.tokens("Booked"));
    Bookings bookings = new Bookings();
    ToolGuard guard = ToolGuard.builder()
        .tool(ToolDescriptor.builder("bookFlight").sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
            .idempotency(IdempotencyPolicy.of(IdempotencyStore.inMemory()))
            .idempotencyNamespace(ctx -> ctx.get(TENANT))
            .build())
        .context(invocation -> Context.of(TENANT, invocation.invocationParameters().get(TENANT)))
        .build();
    Assistant assistant = assistant(guard, bookings);

    String answer = assistant.chat("Book AF123 for Ada", InvocationParameters.from(TENANT, "acme"));

    assertThat(answer).isEqualTo("Booked");
    assertThat(bookings.made).as("booked once").hasValue(1);
    assertThat(server.requests()).isEqualTo(3);
    // the second call is answered with the first call's result: the booking that was made
    assertThat(server.toolResults(2)).containsExactly("booking B-1: Ada on AF123", "booking B-1: Ada on AF123");

    // another tenant's keys are its own: the same arguments book again
    assistant.chat("Book AF123 for Ada", InvocationParameters.from(TENANT, "globex"));
    assertThat(bookings.made).hasValue(2);
    assertThat(server.toolResults(4)).containsExactly("booking B-2: Ada on AF123");
  }

  @Test
  void toolCallsInsideATaskTakeItsStepsAndTheModelIsToldWhenNoneIsLeft() {
    server.then(ScriptedModelServer.toolCall("call_1", "searchFlights", "{\"city\":\"Lyon\"}"),
        ScriptedModelServer.toolCall("call_2", "searchFlights", "{\"city\":\"Nice\"}"),
        ScriptedModelServer.tokens("Lyon only"));
    ToolGuard guard = ToolGuard.builder()
        .tool(ToolDescriptor.builder("searchFlights").sideEffect(SideEffect.READ_ONLY).build())
        .context(invocation -> invocation.invocationParameters().<ContextView>get("reactor"))
        .build();
    Assistant assistant = assistant(guard, new Search());

    String answer = Mono.deferContextual(ctx -> Mono.fromCallable(
            () -> assistant.chat("Flights to Lyon or Nice?", InvocationParameters.from("reactor", ctx))))
        .subscribeOn(Schedulers.boundedElastic())
        .transformDeferred(Breakwater.withTaskBudget(TaskBudget.builder(Duration.ofSeconds(30)).maxSteps(1).build()))
        .block(Duration.ofSeconds(30));

    assertThat(answer).isEqualTo("Lyon only");
    assertThat(server.requests()).isEqualTo(3);
    assertThat(server.toolResults(1)).containsExactly("AF123 to Lyon");
    assertThat(server.toolResults(2)).hasSize(2);
    assertThat(server.toolResults(2).get(1)).startsWith("tool_failure: searchFlights\nkind: budget_exhausted\n");
  }
}
