package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.breaker.Calls.counting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.breaker.CircuitBreaker.State;
import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

class CircuitBreakerRegistryTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  private final CircuitBreakerRegistry registry = CircuitBreakerRegistry.builder()
      .breakers(name -> Calls.on(clock, name).minimumCalls(4).build())
      .build();

  private Throwable call(String tool, Mono<String> call) {
    AtomicReference<Throwable> error = new AtomicReference<>();
    call.transformDeferred(guardedBy(registry, tool)).subscribe(v -> {}, error::set);
    return error.get();
  }

  private Throwable fail(String tool) {
    return call(tool, Mono.error(new HttpStatusException(503)));
  }

  private Throwable succeed(String tool) {
    return call(tool, Mono.just("ok"));
  }

  /** Issue 15: the registry kept a breaker and its meters for every name it ever saw, without a bound. */
  @Test
  void theRegistryRefusesToGrowPastItsBoundAndSaysNamesMustComeFromAClosedSet() {
    CircuitBreakerRegistry bounded = CircuitBreakerRegistry.builder()
        .breakers(name -> Calls.on(clock, name).build())
        .maxBreakers(3)
        .build();
    bounded.breaker("gmail.send");
    bounded.family("gmail.send");
    bounded.breaker("gmail.list");
    assertThat(bounded.breaker("gmail.send")).as("an existing breaker").isNotNull();
    assertThatThrownBy(() -> bounded.breaker("user-42.lookup")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("3 breakers").hasMessageContaining("closed set").hasMessageContaining("maxBreakers");
    assertThatThrownBy(() -> Mono.just("x").transformDeferred(guardedBy(bounded, "calendar.create")))
        .isInstanceOf(IllegalStateException.class);
    assertThat(CircuitBreakerRegistry.ofDefaults()).isNotNull();
    assertThatThrownBy(() -> CircuitBreakerRegistry.builder().maxBreakers(0))
        .hasMessageContaining("maxBreakers is 0");
  }

  @Test
  void toolsSharingAPrefixShareAFamilyBreaker() {
    assertThat(registry.family("gmail.send")).containsSame(registry.family("gmail.list").orElseThrow());
    assertThat(registry.family("gmail.send").orElseThrow().name()).isEqualTo("gmail");
    assertThat(registry.breaker("gmail.send")).isNotSameAs(registry.breaker("gmail.list"));
    assertThat(registry.breaker("gmail.send")).isSameAs(registry.breaker("gmail.send"));
    assertThat(registry.family("calculator")).isEmpty();
  }

  @Test
  void anOpenFamilyRejectsAllItsToolsNamingTheFamily() {
    for (int i = 0; i < 2; i++) {
      fail("gmail.send");
      fail("gmail.list");
    }
    assertThat(registry.family("gmail.send").orElseThrow().state()).as("4 failures across the family")
        .isEqualTo(State.OPEN);
    assertThat(registry.breaker("gmail.send").state()).as("2 failures: below the minimum").isEqualTo(State.CLOSED);

    AtomicInteger upstream = new AtomicInteger();
    for (String tool : new String[] {"gmail.send", "gmail.list", "gmail.labels"}) {
      assertThat(call(tool, counting(upstream, Mono.just("x")))).isInstanceOfSatisfying(
          CircuitBreakerOpenException.class, e -> assertThat(e.source()).isEqualTo("gmail"));
    }
    assertThat(upstream).hasValue(0);
    assertThat(succeed("calendar.create")).as("another family").isNull();
  }

  @Test
  void anOpenToolBreakerRejectsOnlyThatTool() {
    CircuitBreakerRegistry lenientFamilies = CircuitBreakerRegistry.builder()
        .breakers(name -> Calls.on(clock, name).minimumCalls(4).build())
        .familyBreakers(name -> Calls.on(clock, name).minimumCalls(100).build())
        .build();
    for (int i = 0; i < 4; i++) {
      Mono.error(new HttpStatusException(503)).transformDeferred(guardedBy(lenientFamilies, "gmail.send"))
          .subscribe(v -> {}, e -> {});
    }
    assertThat(lenientFamilies.breaker("gmail.send").state()).isEqualTo(State.OPEN);
    assertThat(lenientFamilies.family("gmail.send").orElseThrow().state()).isEqualTo(State.CLOSED);

    AtomicReference<Throwable> send = new AtomicReference<>();
    Mono.just("x").transformDeferred(guardedBy(lenientFamilies, "gmail.send")).subscribe(v -> {}, send::set);
    assertThat(send.get()).isInstanceOfSatisfying(CircuitBreakerOpenException.class,
        e -> assertThat(e.source()).isEqualTo("gmail.send"));
    AtomicReference<String> list = new AtomicReference<>();
    Mono.just("listed").transformDeferred(guardedBy(lenientFamilies, "gmail.list")).subscribe(list::set);
    assertThat(list).hasValue("listed");
  }

  @Test
  void aFamilyRejectionNeverCountsAgainstTheTool() {
    CircuitBreakerRegistry twoLevels = CircuitBreakerRegistry.builder()
        .breakers(name -> Calls.on(clock, name).minimumCalls(2).build())
        .familyBreakers(name -> Calls.on(clock, name).minimumCalls(2).build())
        .build();
    Mono<String> failing = Mono.error(new HttpStatusException(503));
    failing.transformDeferred(guardedBy(twoLevels, "gmail.list")).subscribe(v -> {}, e -> {});
    failing.transformDeferred(guardedBy(twoLevels, "gmail.send")).subscribe(v -> {}, e -> {});
    assertThat(twoLevels.family("gmail.send").orElseThrow().state()).isEqualTo(State.OPEN);

    for (int i = 0; i < 50; i++) {
      failing.transformDeferred(guardedBy(twoLevels, "gmail.send")).subscribe(v -> {}, e -> {});
    }
    clock.advanceTimeBy(twoLevels.family("gmail.send").orElseThrow().openDuration());
    // one earlier failure only: the 50 family rejections did not reach the tool breaker
    failing.transformDeferred(guardedBy(twoLevels, "gmail.send")).subscribe(v -> {}, e -> {});
    assertThat(twoLevels.breaker("gmail.send").state()).isEqualTo(State.OPEN);
    assertThat(twoLevels.breaker("gmail.list").state()).isEqualTo(State.CLOSED);
  }

  @Test
  void bothBreakersSeeEveryAdmittedCall() {
    for (int i = 0; i < 4; i++) {
      fail("drive.upload");
    }
    assertThat(registry.breaker("drive.upload").state()).isEqualTo(State.OPEN);
    assertThat(registry.family("drive.upload").orElseThrow().state()).isEqualTo(State.OPEN);
  }

  /** Each breaker has its own slow-call trigger: a family's counts its tools' slow calls even if they time none. */
  @Test
  void aFamilyWithASlowCallTriggerCountsSlowCallsOfAToolThatHasNone() {
    CircuitBreakerRegistry slowFamily = CircuitBreakerRegistry.builder()
        .breakers(name -> Calls.on(clock, name).minimumCalls(2).build())   // no slow-call trigger
        .familyBreakers(name -> Calls.on(clock, name).minimumCalls(2).slowCall(Duration.ofSeconds(1), 0.5).build())
        .build();
    clock.advanceTimeBy(Duration.ofMinutes(1));
    for (int i = 0; i < 2; i++) {
      StepVerifier.create(Mono.delay(Duration.ofSeconds(2), clock).transformDeferred(guardedBy(slowFamily,
              "gmail.send")))
          .then(() -> clock.advanceTimeBy(Duration.ofSeconds(2)))
          .expectNext(0L)
          .verifyComplete();
    }
    assertThat(slowFamily.familyBreaker("gmail").state()).as("two slow calls of two").isEqualTo(State.OPEN);
    assertThat(slowFamily.breaker("gmail.send").state()).isEqualTo(State.CLOSED);
  }

  /**
   * docs/breaker.md: a family ignores only the per-call timeouts a tool's tightened adaptive timeout cut; a timeout
   * at the upper bound (the attempt's note says not tightened), or with no note at all, counts against the family.
   */
  @Test
  void aPerCallTimeoutNotCutByATightenedAdaptiveTimeoutCountsAgainstTheFamily() {
    io.breakwater.internal.breaker.AdaptiveCut atUpperBound = new io.breakwater.internal.breaker.AdaptiveCut();
    atUpperBound.attempt(false);
    Mono<String> timedOut = Mono.error(new io.breakwater.deadline.CallTimeoutException("drive.upload",
        Duration.ofSeconds(1), Duration.ofSeconds(1)));
    for (int i = 0; i < 2; i++) {
      timedOut.transformDeferred(guardedBy(registry, "drive.upload"))
          .contextWrite(atUpperBound::putIn).subscribe(v -> {}, e -> {});
      timedOut.transformDeferred(guardedBy(registry, "drive.upload")).subscribe(v -> {}, e -> {});
    }
    assertThat(registry.family("drive.upload").orElseThrow().state()).isEqualTo(State.OPEN);
  }

  @Test
  void aToolRejectionGivesTheFamilysProbePermitBack() {
    CircuitBreakerRegistry twoLevels = CircuitBreakerRegistry.builder()
        .breakers(name -> Calls.on(clock, name).minimumCalls(2).openDuration(Duration.ofSeconds(60)).build())
        .familyBreakers(name -> Calls.on(clock, name).minimumCalls(2).openDuration(Duration.ofSeconds(30)).build())
        .build();
    Mono<String> failing = Mono.error(new HttpStatusException(503));
    failing.transformDeferred(guardedBy(twoLevels, "gmail.send")).subscribe(v -> {}, e -> {});
    failing.transformDeferred(guardedBy(twoLevels, "gmail.send")).subscribe(v -> {}, e -> {});
    CircuitBreaker family = twoLevels.family("gmail.send").orElseThrow();
    CircuitBreaker tool = twoLevels.breaker("gmail.send");
    clock.advanceTimeBy(Duration.ofSeconds(30));
    assertThat(family.state()).isEqualTo(State.HALF_OPEN);
    assertThat(tool.state()).isEqualTo(State.OPEN);

    // the family admits this call as its probe, the still-open tool rejects it: the family's permit comes back
    AtomicInteger upstream = new AtomicInteger();
    AtomicReference<Throwable> rejected = new AtomicReference<>();
    counting(upstream, Mono.just("x")).transformDeferred(guardedBy(twoLevels, "gmail.send"))
        .subscribe(v -> {}, rejected::set);
    assertThat(rejected.get()).isInstanceOfSatisfying(CircuitBreakerOpenException.class,
        e -> assertThat(e.source()).isEqualTo("gmail.send"));

    AtomicReference<String> listed = new AtomicReference<>();
    counting(upstream, Mono.just("listed")).transformDeferred(guardedBy(twoLevels, "gmail.list"))
        .subscribe(listed::set);
    assertThat(listed).as("gmail.list probes the family").hasValue("listed");
    assertThat(upstream).hasValue(1);
    assertThat(family.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void aCustomFamilyFunctionGroupsTools() {
    CircuitBreakerRegistry byBackend = CircuitBreakerRegistry.builder()
        .familyOf(tool -> tool.startsWith("search") ? "search-backend" : null)
        .build();
    assertThat(byBackend.family("searchWeb").orElseThrow().name()).isEqualTo("search-backend");
    assertThat(byBackend.family("gmail.send")).isEmpty();
  }

  @Test
  void aFactoryThatBuildsTheWrongNameIsRejected() {
    CircuitBreakerRegistry wrong = CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.ofDefaults("fixed"))
        .build();
    assertThatThrownBy(() -> wrong.breaker("gmail.send"))
        .hasMessage("The breaker factory was asked for 'gmail.send' and built 'fixed': build it with "
            + "CircuitBreaker.builder(name)");
  }
}
