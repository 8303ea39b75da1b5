package io.breakwater.examples.cookbook;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.testing.llm.ScriptedModelServer;
import io.breakwater.testing.llm.ScriptedModelServer.Format;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The LangChain4j tools example, through LangChain4j's OpenAI model against a loopback server scripting tool calls. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GuardedLangChain4jToolsIT {

  private static final String BOOK_AF123 = "{\"flight\":\"AF123\",\"passenger\":\"Ada\"}";

  private final ScriptedModelServer server = new ScriptedModelServer();

  @AfterEach
  void stop() {
    server.close();
  }

  private ChatModel model() {
    return OpenAiChatModel.builder().baseUrl(server.baseUrl(Format.OPENAI)).apiKey("not-needed-locally")
        .modelName("local").maxRetries(0).timeout(Duration.ofSeconds(30)).build();
  }

  @Test
  void aBookingTheModelAsksForTwiceIsMadeOnce() {
    server.then(ScriptedModelServer.toolCall("call_1", "bookFlight", BOOK_AF123),
        ScriptedModelServer.toolCall("call_2", "bookFlight", BOOK_AF123), ScriptedModelServer.tokens("Booked"));
    TravelTools tools = new TravelTools();
    TravelAssistant assistant = GuardedLangChain4jTools.assistant(model(),
        GuardedLangChain4jTools.guard(IdempotencyStore.inMemory()), tools);

    String answer = assistant.chat("Book AF123 for Ada", InvocationParameters.from("tenant", "acme"));

    assertThat(answer).isEqualTo("Booked");
    assertThat(tools.bookings()).isEqualTo(1);
    assertThat(server.toolResults(2)).containsExactly("booking B-1: Ada on AF123", "booking B-1: Ada on AF123");
  }

  @Test
  void aQuestionAskedAsATaskRunsItsToolsInTheTasksContext() {
    server.then(ScriptedModelServer.toolCall("call_1", "bookFlight", BOOK_AF123), ScriptedModelServer.tokens("Booked"),
        ScriptedModelServer.toolCall("call_2", "bookFlight", BOOK_AF123), ScriptedModelServer.tokens("Booked"));
    TravelTools tools = new TravelTools();
    TravelAssistant assistant = GuardedLangChain4jTools.assistant(model(),
        GuardedLangChain4jTools.guardInTasks(IdempotencyStore.inMemory()), tools);

    // the tenant reaches the booking's idempotency key through the task's Context: two tenants, two bookings
    assertThat(GuardedLangChain4jTools.ask(assistant, "Book AF123 for Ada", "acme").block(Duration.ofSeconds(30)))
        .isEqualTo("Booked");
    assertThat(GuardedLangChain4jTools.ask(assistant, "Book AF123 for Ada", "globex").block(Duration.ofSeconds(30)))
        .isEqualTo("Booked");

    assertThat(tools.bookings()).isEqualTo(2);
    assertThat(server.toolResults(1)).containsExactly("booking B-1: Ada on AF123");
    assertThat(server.toolResults(3)).containsExactly("booking B-2: Ada on AF123");
  }
}
