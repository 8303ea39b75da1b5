package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.hedge.HedgedByTest.DELAY;
import static io.breakwater.hedge.HedgedByTest.VERIFY;
import static io.breakwater.hedge.HedgedByTest.fill;
import static io.breakwater.hedge.ScriptedDependency.answering;
import static io.breakwater.hedge.ScriptedDependency.failure;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.failure.HttpStatusException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** One structured event per hedged call, none for the others. */
class HedgeEventsTest {

  final List<String> events = new CopyOnWriteArrayList<>();

  HedgePolicy policy(double budget) {
    HedgePolicy policy = HedgePolicy.builder().name("search").delay(DELAY).budget(budget)
        .meterRegistry(new SimpleMeterRegistry()).eventLog(events::add).build();
    fill(policy, 1);
    events.clear();
    return policy;
  }

  JsonNode event() throws Exception {
    assertThat(events).hasSize(1);
    return new ObjectMapper().readTree(events.get(0));
  }

  @Test
  void aCallThatAnswersBeforeTheDelayWritesNoEvent() {
    HedgePolicy policy = policy(1.0);
    StepVerifier.withVirtualTime(() -> answering(Duration.ofMillis(50)).call().transformDeferred(hedgedBy(policy)))
        .thenAwait(Duration.ofMillis(50))
        .expectNext("a0")
        .expectComplete()
        .verify(VERIFY);
    assertThat(events).isEmpty();
  }

  @Test
  void aHedgeThatWinsIsReportedWithItsDelayAndDuration() throws Exception {
    HedgePolicy policy = policy(1.0);
    ScriptedDependency search = answering(Duration.ofSeconds(10), Duration.ofMillis(100));
    StepVerifier.withVirtualTime(() -> search.call().transformDeferred(hedgedBy(policy)))
        .thenAwait(Duration.ofMillis(200))
        .expectNext("a1")
        .expectComplete()
        .verify(VERIFY);
    JsonNode e = event();
    assertThat(e.path("event").asText()).isEqualTo("hedged_call");
    assertThat(e.path("hedge").asText()).isEqualTo("search");
    assertThat(e.path("outcome").asText()).isEqualTo("won");
    assertThat(e.path("winner").asText()).isEqualTo("hedge-1");
    assertThat(e.path("hedges_started").asInt()).isEqualTo(1);
    assertThat(e.path("budget_refused").asBoolean()).isFalse();
    assertThat(e.path("delay_ms").asDouble()).isEqualTo(100.0);
    assertThat(e.path("duration_ms").asDouble()).isEqualTo(200.0);
  }

  @Test
  void aCallRefusedItsHedgeIsReportedAsSuch() throws Exception {
    HedgePolicy policy = policy(0.1);
    StepVerifier.withVirtualTime(() -> answering(Duration.ofMillis(300)).call().transformDeferred(hedgedBy(policy)))
        .thenAwait(Duration.ofMillis(300))
        .expectNext("a0")
        .expectComplete()
        .verify(VERIFY);
    JsonNode e = event();
    assertThat(e.path("winner").asText()).isEqualTo("primary");
    assertThat(e.path("hedges_started").asInt()).isZero();
    assertThat(e.path("budget_refused").asBoolean()).isTrue();
  }

  @Test
  void aCallWhoseAttemptsAllFailedIsReportedWithTheLastFailuresKindAndNoMessage() throws Exception {
    HedgePolicy policy = policy(1.0);
    ScriptedDependency search = new ScriptedDependency(n -> failure(
        new HttpStatusException(503, java.util.Map.of(), "secret body"), Duration.ofMillis(150)));
    StepVerifier.withVirtualTime(() -> search.call().transformDeferred(hedgedBy(policy)))
        .thenAwait(Duration.ofMillis(250))
        .expectError(HttpStatusException.class)
        .verify(VERIFY);
    JsonNode e = event();
    assertThat(e.path("outcome").asText()).isEqualTo("failed");
    assertThat(e.path("winner").isNull()).isTrue();
    assertThat(e.path("attempts_failed").asInt()).isEqualTo(2);
    assertThat(e.path("failure_kind").asText()).isEqualTo("server_error");
    assertThat(events.get(0)).doesNotContain("secret");
  }

  @Test
  void aCallCancelledAfterItsHedgeStartedIsReportedCancelled() throws Exception {
    HedgePolicy policy = policy(1.0);
    StepVerifier.withVirtualTime(() -> answering(Duration.ofSeconds(10)).call().transformDeferred(hedgedBy(policy)))
        .thenAwait(Duration.ofMillis(150))
        .thenCancel()
        .verify(VERIFY);
    assertThat(event().path("outcome").asText()).isEqualTo("cancelled");
  }

  @Test
  void theDurationIsMeasuredFromTheCallsOwnStartNotFromTheClocksOrigin() throws Exception {
    HedgePolicy policy = policy(1.0);
    ScriptedDependency search = answering(Duration.ofSeconds(10), Duration.ofMillis(100));
    StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofSeconds(5))
            .then(search.call().transformDeferred(hedgedBy(policy))))
        .thenAwait(Duration.ofSeconds(5).plusMillis(200))   // the call starts 5 s in, its hedge answers 200 ms later
        .expectNext("a1")
        .expectComplete()
        .verify(VERIFY);
    assertThat(event().path("duration_ms").asDouble()).isEqualTo(200.0);
  }
}
