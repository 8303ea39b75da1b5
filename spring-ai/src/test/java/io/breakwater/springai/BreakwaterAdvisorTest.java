package io.breakwater.springai;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.openai.OpenAiChatOptions;

class BreakwaterAdvisorTest {

  private static ChatClientResponse text(String text) {
    return new ChatClientResponse(new ChatResponse(List.of(new Generation(new AssistantMessage(text)))), Map.of());
  }

  private static ChatClientResponse toolCall() {
    AssistantMessage call = AssistantMessage.builder().content("")
        .toolCalls(List.of(new AssistantMessage.ToolCall("c1", "function", "weather", "{}"))).build();
    return new ChatClientResponse(new ChatResponse(List.of(new Generation(call))), Map.of());
  }

  @Test
  void textAndToolCallsAreContentAndEmptyResponsesAreFraming() {
    assertThat(BreakwaterAdvisor.isContent(text("Hel"))).isTrue();
    assertThat(BreakwaterAdvisor.isContent(toolCall())).isTrue();
    assertThat(BreakwaterAdvisor.isContent(text(""))).isFalse();
    assertThat(BreakwaterAdvisor.isContent(new ChatClientResponse(new ChatResponse(List.of()), Map.of()))).isFalse();
    assertThat(BreakwaterAdvisor.isContent(new ChatClientResponse(null, Map.of()))).isFalse();
  }

  @Test
  void theDefaultsNameTheBreakerAfterTheModelAndSitInsideTheToolLoop() {
    BreakwaterAdvisor advisor = BreakwaterAdvisor.of("openai");
    assertThat(advisor.guard().breaker().name()).isEqualTo("llm:openai");
    assertThat(advisor.getOrder()).isEqualTo(BreakwaterAdvisor.EACH_MODEL_ROUND)
        .isGreaterThan(org.springframework.ai.chat.client.advisor.ToolCallingAdvisor.DEFAULT_ORDER);
    assertThat(BreakwaterAdvisor.WHOLE_TURN)
        .isLessThan(org.springframework.ai.chat.client.advisor.ToolCallingAdvisor.DEFAULT_ORDER);
    assertThat(advisor.getName()).isEqualTo("breakwater:openai");
  }

  @Test
  void aTaggedRequestKeepsItsOwnHeadersAndAnUntaggableOneIsUnchanged() {
    CancellableCalls calls = new CancellableCalls();
    ChatClientRequest openAi = new ChatClientRequest(new Prompt("hi", OpenAiChatOptions.builder().model("m")
        .customHeaders(Map.of("X-Tenant", "t-42")).build()), Map.of());
    ChatClientRequest tagged = calls.tag(openAi, calls.open());
    assertThat(((OpenAiChatOptions) tagged.prompt().getOptions()).getCustomHeaders())
        .containsEntry("X-Tenant", "t-42").containsKey(CancellableCalls.CALL_HEADER);

    ChatClientRequest plain = new ChatClientRequest(new Prompt("hi"), Map.of());
    assertThat(calls.tag(plain, calls.open())).isSameAs(plain);
  }
}
