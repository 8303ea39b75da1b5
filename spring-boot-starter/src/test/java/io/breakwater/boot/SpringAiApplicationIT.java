package io.breakwater.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.springai.BreakwaterToolCallback;
import io.breakwater.testing.llm.ScriptedModelServer;
import io.breakwater.testing.llm.ScriptedModelServer.Format;
import io.breakwater.testing.llm.ToolCallReplies;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.method.MethodToolCallbackProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A Boot application with Spring AI's own {@code ChatClient} auto-configuration, Spring AI's real OpenAI chat model
 * (pointed at a loopback server that scripts the model's answers) and a tool bean, configured only by properties:
 * the {@code ChatClient.Builder} Boot builds carries the advisor, and the tool bean runs as the Breakwater tool its
 * name configures.
 */
@SpringBootTest(classes = SpringAiApplicationIT.App.class, webEnvironment = SpringBootTest.WebEnvironment.NONE,
    properties = {
        "breakwater.spring-ai.model=openai",
        "breakwater.spring-ai.retry=llm",
        "breakwater.retry.policies.llm.max-retries=1",
        "breakwater.retry.policies.llm.backoff.type=fixed",
        "breakwater.retry.policies.llm.backoff.base=10ms",
        "breakwater.tools[book_flight].side-effect=non-idempotent-write",
        "breakwater.tools[book_flight].idempotency=true",
        "breakwater.tools[book_flight].tenant-key=tenant"})
class SpringAiApplicationIT {

  static final ScriptedModelServer MODEL = new ScriptedModelServer();

  @AfterAll
  static void stopModel() {
    MODEL.close();
  }

  /** The application's tools, as Spring AI users write them. */
  public static class TravelTools {
    final AtomicInteger bookings = new AtomicInteger();

    @Tool(name = "book_flight", description = "Books a seat on a flight")
    public String book(String flight) {
      return "booked " + flight + " as B-" + bookings.incrementAndGet();
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {
    @Bean
    OpenAiChatModel openAiChatModel() {
      return OpenAiChatModel.builder()
          .options(OpenAiChatOptions.builder().baseUrl(MODEL.baseUrl(Format.OPENAI)).apiKey("not-needed-locally")
              .model("local").maxRetries(0).timeout(Duration.ofMinutes(1)).build())
          .build();
    }

    @Bean
    TravelTools travelTools() {
      return new TravelTools();
    }

    @Bean
    ToolCallbackProvider travelToolCallbacks(TravelTools tools) {
      return MethodToolCallbackProvider.builder().toolObjects(tools).build();
    }
  }

  @Autowired
  ChatClient.Builder chatClients;
  @Autowired
  ToolCallbackProvider tools;
  @Autowired
  TravelTools travel;

  @Test
  void theBootBuiltChatClientRetriesA503AndARepeatedBookingWithTheConfiguredToolRunsOnce() {
    MODEL.then(ScriptedModelServer.status(503, Map.of()),
        ToolCallReplies.toolCall("call_1", "book_flight", "{\"flight\":\"AF7641\"}"),
        ToolCallReplies.toolCall("call_2", "book_flight", "{\"flight\":\"AF7641\"}"),
        ScriptedModelServer.tokens("Booked"));

    assertThat(tools.getToolCallbacks()).singleElement().isInstanceOf(BreakwaterToolCallback.class);
    String answer = chatClients.build().prompt("Book AF7641").toolCallbacks(tools)
        .toolContext(Map.of("tenant", "acme")).call().content();

    assertThat(answer).isEqualTo("Booked");
    assertThat(MODEL.requests()).as("the 503 retried by the advisor, then the tool loop's three rounds")
        .isEqualTo(4);
    assertThat(travel.bookings).as("the repeated booking ran once").hasValue(1);
    assertThat(MODEL.bodies().get(3)).contains("booked AF7641 as B-1");
  }
}
