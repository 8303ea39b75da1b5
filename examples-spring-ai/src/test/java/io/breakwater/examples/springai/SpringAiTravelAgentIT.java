package io.breakwater.examples.springai;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.examples.springai.SpringAiTravelAgent.Run;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Spring AI travel agent, run as its {@code main} runs it: a real Boot application with Spring AI's OpenAI chat
 * model and {@code ChatClient}, the Breakwater starter and {@code breakwater-spring-ai}, against loopback servers.
 */
class SpringAiTravelAgentIT {

  private static Run run;

  @BeforeAll
  static void runTheAgent() {
    run = SpringAiTravelAgent.run();
  }

  @Test
  void theOverloadedModelsFirstAnswerIsRetriedAndTheTurnCompletes() {
    assertThat(run.modelRequests()).isEqualTo(4);   // 503, then tool calls, tool calls again, the answer
    assertThat(run.answer()).startsWith("Your trip to Lyon on 12 December:");
  }

  @Test
  void theStalledToolIsCutAtItsTimeoutRetriedOnceAndTheModelReadsWhyItFailed() {
    assertThat(run.weatherRequests()).isEqualTo(2);
    assertThat(run.weatherRequestsClosed()).isEqualTo(2);   // counted before the model's next two rounds end
    assertThat(run.toolResultsSeen().get(0)).contains("weather").containsIgnoringCase("time");
  }

  @Test
  void theBookingTheModelAskedForTwiceChargesTheCardOnceAndAnswersBothWithTheSameReference() {
    assertThat(run.charges()).isEqualTo(1);
    assertThat(run.toolResultsSeen()).hasSize(3);
    assertThat(run.toolResultsSeen().get(2)).isEqualTo(run.toolResultsSeen().get(1)).contains("BW-1001");
    assertThat(run.answer()).contains("BW-1001");
  }
}
