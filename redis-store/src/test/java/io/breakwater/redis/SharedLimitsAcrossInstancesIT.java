package io.breakwater.redis;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;
import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.TaskBudget;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.ProviderRateLimits;
import io.breakwater.limit.RateLimit;
import io.breakwater.redis.LoopbackProvider.Reply;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonReactiveClient;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/**
 * The scenario on real components: a provider on loopback allowing 60 requests and 10 000 tokens per interval
 * (with OpenAI's headers), shared by 4 instances (4 Redisson clients, 4 HTTP connection pools, one real
 * redis-server), each running 3 agents, for 30 s ({@code -Dbreakwater.limits.runSeconds=600} for the ten
 * minutes). The interval is a fifth of the run instead of a minute so that the run covers five of them; one instance is
 * killed halfway.
 */
class SharedLimitsAcrossInstancesIT {

  private static final Duration RUN = Duration.ofSeconds(Math.max(5, Long.getLong("breakwater.limits.runSeconds", 30)));
  private static final Duration INTERVAL = RUN.dividedBy(5);
  private static final long TOKENS = 10_000;
  private static final int MAX_TOKENS = 300;

  private static final class Instance {
    final RedissonReactiveClient redisson;
    final HttpClient http;
    final RateLimit rate;
    final ConcurrencyLimit concurrency;
    final List<Disposable> agents = new ArrayList<>();
    /** A dead instance's process makes no more calls. */
    volatile boolean dead;

    Instance(RedissonReactiveClient redisson, HttpClient http) {
      this.redisson = redisson;
      this.http = http;
      this.rate = RedisRateLimit.builder(redisson, RateLimit.builder("provider").requests(60, INTERVAL)
              .tokens(TOKENS, INTERVAL).providerHeaders(ProviderRateLimits.openAi()).build())
          .operationTimeout(Duration.ofSeconds(5)).build();
      this.concurrency = RedisConcurrencyLimit.builder(redisson, ConcurrencyLimit.builder("provider").fixed(12)
              .build())
          .lease(Duration.ofSeconds(3)).operationTimeout(Duration.ofSeconds(5)).build();
    }
  }

  private static Mono<Void> agent(Instance instance, int id, AtomicInteger refused, AtomicInteger rejected) {
    SplittableRandom random = new SplittableRandom(id);
    TaskBudget task = TaskBudget.builder(RUN.multipliedBy(2)).name("agent-" + id).build();
    Mono<Void> turn = Mono.defer(() -> {
      long prompt = 150 + random.nextInt(300);
      long completion = 20 + random.nextInt(MAX_TOKENS - 20);
      long latency = 300 + random.nextInt(1200);
      return Mono.defer(() -> instance.dead ? Mono.<Reply>never()
              : LoopbackProvider.call(instance.http, prompt, completion, latency))
          .transformDeferred(limitedBy(instance.concurrency))
          .transformDeferred(throttledBy(instance.rate, CallWeight.tokens(prompt + MAX_TOKENS, Reply::totalTokens)
              .headers(Reply::headers)))
          .then()
          .onErrorResume(LimitExceededException.class, e -> {
            refused.incrementAndGet();
            return Mono.delay(e.retryAfter().orElse(Duration.ofMillis(500))).then();
          })
          .onErrorResume(HttpStatusException.class, e -> {
            rejected.incrementAndGet();
            return Mono.delay(Duration.ofSeconds(1)).then();
          })
          .then(Mono.delay(Duration.ofMillis(random.nextInt(300))))
          .then();
    });
    return turn.repeat().then().transformDeferred(withTaskBudget(task));
  }

  @Test
  void fourInstancesShareTheProvidersLimitsWithNo429sAndUseItsTokensEvenWhenOneDies() throws InterruptedException {
    try (RedisProcess redis = RedisProcess.start(); RedisClients clients = RedisClients.forLoad();
        LoopbackProvider provider = new LoopbackProvider(60, TOKENS, INTERVAL)) {
      List<Instance> instances = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        instances.add(new Instance(clients.standalone(redis.address()), provider.client()));
      }
      AtomicInteger refused = new AtomicInteger();
      AtomicInteger rejected = new AtomicInteger();
      long start = System.nanoTime();
      provider.countUntil(start + RUN.toNanos());
      for (int i = 0; i < 12; i++) {
        Instance instance = instances.get(i % 4);
        instance.agents.add(agent(instance, i, refused, rejected).subscribe());
      }
      Thread.sleep(RUN.toMillis() / 2);
      Instance dying = instances.get(3);
      dying.dead = true;
      clients.shutdown(dying.redisson);   // dies: its permits and its calls' settlements stay in Redis
      dying.agents.forEach(Disposable::dispose);
      Thread.sleep(RUN.toMillis() / 2);
      instances.forEach(i -> i.agents.forEach(Disposable::dispose));

      long budget = TOKENS * (RUN.toMillis() / INTERVAL.toMillis());
      System.out.printf("4 instances, 12 agents, %s: %d calls answered, %d answered 429, %d refused by the limits, "
              + "at most %d in flight at the provider; %d tokens counted = %.1f %% of %d (%d more were in the bucket "
              + "at the start)%n", RUN, provider.answered.get(), provider.rejected.get(), refused.get(),
          provider.mostInFlight.get(), provider.tokensCounted.get(), 100.0 * provider.tokensCounted.get() / budget,
          budget, TOKENS);
      assertThat(provider.rejected).as("429s").hasValue(0);
      assertThat(rejected).hasValue(0);
      assertThat(provider.mostInFlight.get()).as("the shared concurrency limit").isLessThanOrEqualTo(12);
      assertThat(provider.tokensCounted.get()).as("tokens used of %d", budget).isGreaterThanOrEqualTo(budget * 9 / 10);
    }
  }
}
