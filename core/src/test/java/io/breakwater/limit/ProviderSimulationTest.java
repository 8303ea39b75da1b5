package io.breakwater.limit;

import static io.breakwater.Breakwater.throttledBy;
import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.TaskBudget;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.limit.SimulatedProvider.Format;
import io.breakwater.limit.SimulatedProvider.Reply;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The scenario in virtual time: a provider allowing 60 requests and 10 000 tokens a minute, with its real
 * header formats, driven by 5 concurrent agents for 10 minutes. Each agent's call estimates its tokens as the prompt
 * plus {@code max_tokens} and is corrected by the reply's usage.
 */
class ProviderSimulationTest {

  private static final Duration RUN = Duration.ofMinutes(10);
  private static final long TOKENS_PER_MINUTE = 10_000;
  private static final int MAX_TOKENS = 300;

  private static final class Agents {
    final AtomicInteger refused = new AtomicInteger();
    final AtomicInteger rateLimited = new AtomicInteger();
  }

  /** One agent: call, think, call again, until the run is over. */
  private static Mono<Void> agent(int id, SimulatedProvider provider, RateLimit limit, VirtualTimeScheduler clock,
      Agents agents) {
    SplittableRandom random = new SplittableRandom(1000 + id);
    TaskBudget task = TaskBudget.builder(RUN.plusMinutes(1)).name("agent-" + id).scheduler(() -> clock).build();
    Mono<Void> turn = Mono.defer(() -> {
      long prompt = 150 + random.nextInt(300);
      long completion = 20 + random.nextInt(MAX_TOKENS - 20);
      Duration latency = Duration.ofMillis(500 + random.nextInt(2500));
      Duration think = Duration.ofMillis(random.nextInt(1000));
      return provider.call(prompt, completion, latency)
          .transformDeferred(throttledBy(limit, CallWeight.tokens(prompt + MAX_TOKENS, Reply::totalTokens)
              .headers(Reply::headers)))
          .then()
          .onErrorResume(LimitExceededException.class, e -> {
            agents.refused.incrementAndGet();
            return Mono.delay(e.retryAfter().orElse(Duration.ofSeconds(1)), clock).then();
          })
          .onErrorResume(HttpStatusException.class, e -> {
            agents.rateLimited.incrementAndGet();
            return Mono.delay(Duration.ofSeconds(1), clock).then();
          })
          .then(Mono.delay(think, clock))
          .then();
    });
    long end = RUN.toNanos();
    return turn.repeat(() -> clock.now(TimeUnit.NANOSECONDS) < end).then()
        .transformDeferred(withTaskBudget(task));
  }

  private static void run(SimulatedProvider provider, RateLimit limit, VirtualTimeScheduler clock, Agents agents,
      Runnable everySecond) {
    Flux.range(0, 5).flatMap(i -> agent(i, provider, limit, clock, agents)).subscribe();
    for (long s = 0; s < RUN.toSeconds() + 60; s++) {
      everySecond.run();
      clock.advanceTimeBy(Duration.ofSeconds(1));
    }
  }

  @ParameterizedTest
  @EnumSource(Format.class)
  void fiveAgentsForTenMinutesGetNo429AndUseAtLeastNinetyPercentOfTheTokens(Format format) {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    try {
      SimulatedProvider provider = new SimulatedProvider(clock, format, 60, TOKENS_PER_MINUTE, RUN);
      RateLimit limit = RateLimit.builder("provider").requests(60, Duration.ofMinutes(1))
          .tokens(TOKENS_PER_MINUTE, Duration.ofMinutes(1)).scheduler(() -> clock).build();
      Agents agents = new Agents();

      run(provider, limit, clock, agents, () -> {});

      long budget = TOKENS_PER_MINUTE * RUN.toMinutes();
      System.out.printf("%s: %d calls, %d answered 429, %d refused by the limit; tokens counted by the provider in "
              + "the 10 minutes: %d = %.1f %% of %d (%d more were in the bucket at the start)%n", format,
          provider.answered, provider.rejected, agents.refused.get(), provider.tokensCountedInRun,
          100.0 * provider.tokensCountedInRun / budget, budget, TOKENS_PER_MINUTE);
      assertThat(provider.rejected).as("429s").isZero();
      assertThat(agents.rateLimited).hasValue(0);
      assertThat(provider.tokensCountedInRun).as("tokens used of %d", budget)
          .isGreaterThanOrEqualTo(budget * 9 / 10);
    } finally {
      clock.dispose();
    }
  }

  @Test
  void aClientSharingItsKeyLearnsFromTheHeadersAndSlowsDownBefore429s() {
    SimulatedProvider learning = sharedKey(ProviderRateLimits.openAi());
    SimulatedProvider blind = sharedKey(ProviderRateLimits.none());
    long left = (TOKENS_PER_MINUTE - 4_000) * RUN.toMinutes();
    System.out.printf("another client takes 4000 tokens a minute of the key: with the headers read %d 429s and "
            + "%d tokens (%.1f %% of the %d left); without, %d 429s%n", learning.rejected,
        learning.tokensCountedInRun, 100.0 * learning.tokensCountedInRun / left, left, blind.rejected);
    assertThat(learning.rejected).as("429s while learning, against %d blind", blind.rejected)
        .isLessThanOrEqualTo(blind.rejected / 5);
    assertThat(learning.tokensCountedInRun).as("the share left by the other client is used")
        .isGreaterThanOrEqualTo(left * 9 / 10);
  }

  /** The provider after our agents ran while another client took 400 tokens every 6 s of the same key. */
  private static SimulatedProvider sharedKey(ProviderRateLimits reader) {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    try {
      SimulatedProvider provider = new SimulatedProvider(clock, Format.OPENAI, 60, TOKENS_PER_MINUTE, RUN);
      RateLimit limit = RateLimit.builder("provider").requests(60, Duration.ofMinutes(1))
          .tokens(TOKENS_PER_MINUTE, Duration.ofMinutes(1)).providerHeaders(reader).scheduler(() -> clock).build();
      Agents agents = new Agents();
      long[] second = {0};
      run(provider, limit, clock, agents, () -> {
        if (second[0]++ % 6 == 0) {
          provider.otherClientTakes(400);
        }
      });
      return provider;
    } finally {
      clock.dispose();
    }
  }
}
