package io.breakwater.examples.springai;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.springai.BreakwaterToolCallback;
import java.time.Duration;
import java.util.Map;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.support.ToolCallbacks;
import org.springframework.ai.tool.ToolCallback;

/**
 * Spring AI tools (methods annotated with {@code @Tool}) whose calls run as Breakwater tools: a lookup cut at its
 * timeout, with the failure told to the model, and a booking that runs once for the same flight, per tenant.
 */
public final class GuardedSpringAiTools {

  private GuardedSpringAiTools() {}

  // snippet:spring-ai-tools
  /** The {@code @Tool} methods of {@code tools}, each call guarded as the Breakwater tool of its name. */
  public static ToolCallback[] guarded(Object tools, IdempotencyStore store) {
    Map<String, ToolDescriptor> descriptors = Map.of(
        "weather_lookup", ToolDescriptor.builder("weather_lookup")
            .sideEffect(SideEffect.READ_ONLY)
            .timeouts(CallTimeouts.fixed(Duration.ofSeconds(2)))   // a stalled lookup is cut; the model reads why
            .retry(RetryPolicy.builder().name("weather_lookup").maxRetries(1).build())
            .build(),
        "book_flight", ToolDescriptor.builder("book_flight")
            .sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
            .idempotency(IdempotencyPolicy.of(store))              // the same booking asked twice runs once
            .idempotencyNamespace(ctx -> ctx.get("tenant"))        // per tenant, from the request's tool context
            .build());
    return BreakwaterToolCallback.wrap(ToolCallbacks.from(tools), descriptors::get);
  }
  // end-snippet

  // snippet:spring-ai-tools-call
  /** One question, with the guarded tools and the tenant their idempotency keys are kept under. */
  public static String ask(ChatClient chat, ToolCallback[] tools, String tenant, String question) {
    return chat.prompt(question)
        .toolCallbacks(tools)
        .toolContext(Map.of("tenant", tenant))   // in the Reactor Context of each tool call, under "tenant"
        .call()
        .content();
  }
  // end-snippet
}
