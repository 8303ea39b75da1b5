package io.breakwater.examples.agent;

import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/** The multi-tenant snippet of {@code docs/agent.md}; {@code TenantsTest} runs it. */
public final class Tenants {

  /** Where the web layer puts the tenant id in the Reactor Context. */
  public static final String TENANT = "tenant";

  // snippet:domain-documents
  /** A search over a tenant's documents. */
  public record Search(String query) {}
  // end-snippet

  private Tenants() {}

  /** The documents tool, deduplicated per tenant. */
  // snippet:agent-tenants
  public static Tool<Search, String> documents(IdempotencyStore store, Function<Search, Mono<String>> search) {
    ToolDescriptor documents = ToolDescriptor.builder("docs.search")
        .sideEffect(SideEffect.READ_ONLY)
        .idempotency(IdempotencyPolicy.of(store))
        .idempotencyNamespace(ctx -> ctx.get("tenant"))   // the tenant, read from each call's Reactor Context
        .build();                                       // without it (or .singleTenant()), build() refuses
    return Tool.of(documents, search, String.class);
  }
  // end-snippet

  /** A call made on behalf of {@code tenant}. */
  // snippet:agent-tenants-call
  public static Mono<String> searchAs(String tenant, Tool<Search, String> documents, Search search) {
    return documents.call(search)
        .contextWrite(Context.of("tenant", tenant));     // put by the web layer around the whole task
  }
  // end-snippet
}
