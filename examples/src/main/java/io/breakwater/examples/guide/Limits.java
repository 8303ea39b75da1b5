package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.examples.guide.Domain.Flights;
import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.ProviderRateLimits;
import io.breakwater.limit.RateLimit;
import io.breakwater.redis.RedisConcurrencyLimit;
import io.breakwater.redis.RedisRateLimit;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.redisson.api.RedissonReactiveClient;
import reactor.core.publisher.Mono;

/** The snippets of {@code docs/limits.md}; {@code LimitsTest} runs them in virtual time, {@code LimitsIT} on Redis. */
public final class Limits {

  private Limits() {}

  // snippet:domain-llm
  /** A model's answer: its text, its usage and the response's headers. */
  public record Completion(String text, long totalTokens, Map<String, List<String>> headers) {}

  /** A chat model client. */
  public interface Llm {
    Mono<Completion> complete(String prompt, int maxTokens);
  }
  // end-snippet

  public static ConcurrencyLimit flights() {
    // snippet:limits-concurrency
    ConcurrencyLimit flights = ConcurrencyLimit.builder("flights")   // one per dependency, shared by every call
        .fixed(10)                                   // at most 10 searches in flight
        .maxWait(Duration.ofSeconds(2))              // then wait at most 2 s (and never past the deadline)
        .build();
    // end-snippet
    return flights;
  }

  // snippet:limits-limited
  public static Mono<Offers> search(Flights client, ConcurrencyLimit flights, Query query) {
    Mono<Offers> offers = client.search(query)
        .transformDeferred(perCallTimeout())         // waiting for a permit does not count against the call
        .transformDeferred(limitedBy(flights))
        .transformDeferred(retryWithBudget(RetryPolicy.builder().name("flights").build()))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));
    return offers;
  }
  // end-snippet

  public static ConcurrencyLimit adaptive() {
    // snippet:limits-adaptive
    ConcurrencyLimit search = ConcurrencyLimit.builder("search")
        .adaptive(10, 2, 100)                        // start at 10, learn between 2 and 100 from latency and drops
        .maxWait(Duration.ZERO)                      // shed load at once instead of queueing
        .build();
    // end-snippet
    return search;
  }

  public static RateLimit openAi() {
    // snippet:limits-rate
    RateLimit openai = RateLimit.builder("openai")
        .requests(500, Duration.ofMinutes(1))
        .tokens(200_000, Duration.ofMinutes(1))
        .providerHeaders(ProviderRateLimits.openAi())   // learn remaining, limit and reset from every answer
        .build();
    // end-snippet
    return openai;
  }

  // snippet:limits-throttle
  public static Mono<String> answer(Llm llm, RateLimit openai, String prompt, long promptTokens) {
    int maxTokens = 800;
    Mono<String> answer = llm.complete(prompt, maxTokens)
        .transformDeferred(throttledBy(openai,
            CallWeight.tokens(promptTokens + maxTokens, Completion::totalTokens)   // estimate, then actual usage
                .headers(Completion::headers)))                                    // the provider's headers
        .map(Completion::text)
        .onErrorResume(LimitExceededException.class, e -> Mono.just("The model is busy; try again in "
            + e.retryAfter().map(Duration::toSeconds).orElse(5L) + " s."))
        .transformDeferred(withDeadline(Duration.ofSeconds(30)));
    return answer;
  }
  // end-snippet

  // snippet:limits-tool
  public static ToolDescriptor tool(RateLimit openai) {
    ToolDescriptor ask = ToolDescriptor.builder("model.ask")
        .sideEffect(SideEffect.READ_ONLY)
        .concurrencyLimit(ConcurrencyLimit.fixed(4))                           // a permit for each attempt
        .rateLimit(openai, CallWeight.tokens(1_800, Completion::totalTokens))  // the usage is spent from the task too
        .build();
    return ask;
  }
  // end-snippet

  // snippet:limits-redis
  public static List<Object> shared(RedissonReactiveClient redisson) {
    RateLimit openai = RedisRateLimit.builder(redisson, RateLimit.builder("openai")
            .requests(500, Duration.ofMinutes(1))
            .tokens(200_000, Duration.ofMinutes(1))
            .build())
        .build();                                    // one pair of buckets for every instance: bw:rate:{openai}
    ConcurrencyLimit search = RedisConcurrencyLimit.builder(redisson, ConcurrencyLimit.builder("search")
            .fixed(20)
            .build())
        .lease(Duration.ofSeconds(30))               // a dead instance's permits come back within 30 s
        .failClosed()                                // refuse calls while Redis is unreachable (default: open)
        .build();
    return List.of(openai, search);
  }
  // end-snippet
}
