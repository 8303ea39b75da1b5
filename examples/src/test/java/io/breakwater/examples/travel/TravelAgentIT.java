package io.breakwater.examples.travel;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.retry.RetryBudget;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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
}
