package io.breakwater.examples.springai;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.annotation.Tool;

/**
 * The guarded tools through a {@code ChatClient} and Spring AI's own tool loop, on a model that asks for the same
 * booking twice and then looks up the weather, whose service never answers.
 */
class GuardedSpringAiToolsTest {

  /** The application's tools. */
  static final class TravelTools {
    final AtomicInteger bookings = new AtomicInteger();

    @Tool(name = "book_flight", description = "Books a seat on a flight")
    String book(String flight) {
      return "booked " + flight + " as B-" + bookings.incrementAndGet();
    }

    @Tool(name = "weather_lookup", description = "The weather in a city")
    String weather(String city) throws InterruptedException {
      new CountDownLatch(1).await();   // the weather service never answers
      return "sunny";
    }
  }

  /** A model that asks for each of {@code calls} in turn, one per round, then answers with the tool results. */
  private static ChatModel scripted(List<AssistantMessage.ToolCall> calls, List<String> toolResults) {
    return new ChatModel() {
      @Override
      public ChatOptions getOptions() {
        return ToolCallingChatOptions.builder().build();   // options that carry tools, as real models' do
      }

      @Override
      public ChatResponse call(Prompt prompt) {
        List<Message> messages = prompt.getInstructions();
        if (messages.get(messages.size() - 1) instanceof ToolResponseMessage results) {
          results.getResponses().forEach(r -> toolResults.add(r.responseData()));
        }
        int round = toolResults.size();
        AssistantMessage answer = round < calls.size()
            ? AssistantMessage.builder().content("").toolCalls(List.of(calls.get(round))).build()
            : new AssistantMessage("done");
        return new ChatResponse(List.of(new Generation(answer)));
      }
    };
  }

  @Test
  void theSameBookingAskedTwiceRunsOnceAndTheStalledLookupIsCutAndToldToTheModel() {
    TravelTools travel = new TravelTools();
    ToolCallback[] tools = GuardedSpringAiTools.guarded(travel, IdempotencyStore.inMemory());
    List<String> toolResults = new ArrayList<>();
    ChatClient chat = ChatClient.create(scripted(List.of(
        new AssistantMessage.ToolCall("c1", "function", "book_flight", "{\"flight\":\"AF7641\"}"),
        new AssistantMessage.ToolCall("c2", "function", "book_flight", "{\"flight\":\"AF7641\"}"),
        new AssistantMessage.ToolCall("c3", "function", "weather_lookup", "{\"city\":\"Lyon\"}")), toolResults));

    String answer = GuardedSpringAiTools.ask(chat, tools, "acme", "Book AF7641, then the weather in Lyon");

    assertThat(answer).isEqualTo("done");
    assertThat(travel.bookings).hasValue(1);
    assertThat(toolResults).hasSize(3);
    assertThat(toolResults.subList(0, 2)).containsOnly("\"booked AF7641 as B-1\"");
    assertThat(toolResults.get(2)).as("the feedback docs/spring-ai.md shows").isEqualTo("""
        tool_failure: weather_lookup
        kind: timeout
        reason: no answer within 2s (2 attempts)
        next: continue without this result; or call weather_lookup once more later if the result is essential
        avoid: calling weather_lookup again with the same arguments right away
        budget left: unlimited""");
  }
}
