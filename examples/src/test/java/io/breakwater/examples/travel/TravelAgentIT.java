package io.breakwater.examples.travel;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.retry.RetryBudget;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The README's first command, run as an integration test against its loopback servers: the agent survives its
 * scripted faults and finishes in time.
 */
class TravelAgentIT {

  @Test
  void agentFinishesWithinItsDeadlineWithADegradedButUsefulPlan() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    TravelAgent.Report report = new TravelAgent(new PrintStream(buffer, true, StandardCharsets.UTF_8),
        IdempotencyStore.inMemory(), name -> RetryBudget.ratio(0.2, 10)).run();
    String out = buffer.toString(StandardCharsets.UTF_8);

    assertThat(report.tookMillis()).as("within the 15 s task deadline").isLessThan(15_000);
    assertThat(report.answer()).contains("BW456").contains("Casa Breakwater");
    assertThat(report.charges()).as("the duplicated payment attempt charged once").isEqualTo(1);
    assertThat(report.stalledFlightsCancelled()).as("the stalled flights request was cancelled, not left running")
        .isEqualTo(1);
    assertThat(report.modelStreams()).as("the stalled model stream was resumed once").isEqualTo(2);
    assertThat(report.attractions()).as("attractions degraded to the fallback").contains("offline suggestion");
    assertThat(report.events()).as("one JSON event per tool call").isNotEmpty()
        .allSatisfy(event -> assertThat(event).startsWith("{").contains("\"tool\""));
    assertThat(out).contains("Finished in").contains("Metrics:");
  }

  /**
   * The README's command runs the same scripted faults twice: plain Reactor Netty code hangs on the stall, charges the
   * duplicated deposit twice and loses the stalled stream's words; the Breakwater run charges once and answers. The
   * output ends with the table of both, in plain ASCII (no escape codes, no control characters).
   */
  @Test
  void demoEndsWithBothRunsSideBySideWithoutBreakwaterChargingTwice() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    TravelAgent.Comparison runs = new TravelAgent(new PrintStream(buffer, true, StandardCharsets.UTF_8),
        IdempotencyStore.inMemory(), name -> RetryBudget.ratio(0.2, 10)).compare(Duration.ofSeconds(3));
    String out = buffer.toString(StandardCharsets.UTF_8);

    assertThat(runs.without().charges()).as("plain code charges the duplicated deposit twice").isEqualTo(2);
    assertThat(runs.with().summary().charges()).as("Breakwater charges it once").isEqualTo(1);
    assertThat(runs.without().taskTime()).startsWith("hung (cut by the demo at ");
    assertThat(runs.without().answerOrFailure()).isEqualTo("no answer: the model stream hung after 4 words");
    assertThat(runs.without().tokensLost()).as("the stalled stream's words, discarded").isEqualTo(4);
    assertThat(runs.with().summary().tokensLost()).as("the resumed stream keeps them").isZero();
    assertThat(runs.without().requests()).containsEntry("flights", "1 (hung; cut by the demo at 3 s)")
        .containsEntry("attractions", "4").containsEntry("payments", "2");
    assertThat(runs.with().summary().requests()).containsEntry("payments", "1")
        .containsEntry("model streams", "2 (the stalled one resumed)");

    String table = out.substring(out.lastIndexOf("Same scripted faults, without and with Breakwater:"));
    assertThat(table).contains("without Breakwater").contains("with Breakwater");
    assertThat(table.lines().filter(l -> l.startsWith("  deposits charged")).findFirst().orElseThrow())
        .matches("  deposits charged +\\| 2 +\\| 1");
    assertThat(table.lines().filter(l -> l.startsWith("  tokens lost")).findFirst().orElseThrow())
        .matches("  tokens lost +\\| 4 +\\| 0");
    assertThat(out.chars().filter(c -> c != '\n' && (c < 0x20 || c > 0x7e)))
        .as("plain ASCII: no escape codes or control characters").isEmpty();
  }
}
