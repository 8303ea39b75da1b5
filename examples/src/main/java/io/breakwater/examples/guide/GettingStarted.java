package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.http.HttpResponses;
import io.breakwater.retry.Backoff;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmStreamClient;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/**
 * The snippets of {@code docs/getting-started.md} and the README: one guarded call and one stream timed by its
 * progress ({@link Refunds} has the side effect made to happen once). {@code GettingStartedIT} runs each against a loopback server.
 */
public final class GettingStarted {

  private final HttpClient http;
  private final CircuitBreaker breaker = CircuitBreaker.ofDefaults("flights");

  public GettingStarted(HttpClient http) {
    this.http = http;
  }

  /** The README's first snippet: a deadline around a plain Reactor Netty call. */
  public Mono<String> weather() {
    return weather(http);
  }

  // snippet:readme-deadline
  static Mono<String> weather(HttpClient client) {      // HttpClient.create().baseUrl("https://api.example.com")
    return HttpResponses.bodyAsString(client.get().uri("/weather"))   // 4xx, 5xx: HttpStatusException
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));
  }
  // end-snippet

  /** Deadline outermost, then classified retries, the breaker, and a timeout per attempt. */
  public Mono<String> flights() {
    return flights(http, breaker);
  }

  // snippet:getting-started-guard-one-call
  static Mono<String> flights(HttpClient http, CircuitBreaker breaker) {   // breaker: shared by every call
    return HttpResponses.bodyAsString(http.get().uri("/flights"))   // 4xx, 5xx: a failure
        .transformDeferred(perCallTimeout())                          // each attempt: min(remaining × 0.6, 12 s)
        .transformDeferred(guardedBy(breaker))                        // CircuitBreaker.ofDefaults("flights")
        .transformDeferred(retryWithBudget(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));     // the task's deadline, outermost
  }
  // end-snippet

  /** An LLM's answer, token by token, timed by its progress. */
  // snippet:getting-started-stream
  public static Flux<String> tokens(LlmStreamClient llm, Object request) {   // request: your provider's request body
    return llm.stream(request)          // LlmStreamClient: OpenAI, Anthropic, Gemini, Ollama
        .ofType(LlmDelta.Text.class).map(LlmDelta.Text::text)
        .transformDeferred(withDeadline(Duration.ofSeconds(60)));
  }
  // end-snippet
}
