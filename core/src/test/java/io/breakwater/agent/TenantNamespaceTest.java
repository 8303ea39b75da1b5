package io.breakwater.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.context.Context;

/**
 * Issue 15, high 2: tool results crossed tenants. Keys had no namespace, so tenant {@code globex} got
 * {@code documents of acme matching salaries}. A tool with idempotency now reads its keys' namespace from the Reactor
 * Context, or is declared single-tenant; {@code build()} refuses anything else.
 */
class TenantNamespaceTest {

  static final Duration VERIFY = Duration.ofSeconds(5);
  static final String TENANT = "tenant";

  record Search(String query) {}

  final Fixtures fx = new Fixtures();
  final AtomicInteger runs = new AtomicInteger();
  final IdempotencyPolicy idempotency = IdempotencyPolicy.of(IdempotencyStore.inMemory());

  Mono<String> search(Search s) {
    return Mono.deferContextual(ctx -> {
      runs.incrementAndGet();
      return Mono.just("documents of " + ctx.get(TENANT) + " matching " + s.query());
    });
  }

  @Test
  void aToolWithIdempotencyAndNoNamespaceSourceIsRefusedUnlessDeclaredSingleTenant() {
    assertThatThrownBy(() -> fx.descriptor("docs.search").idempotency(idempotency).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tenants").hasMessageContaining(".idempotencyNamespace(ctx -> ctx.get(TENANT))")
        .hasMessageContaining(".singleTenant()");
    assertThat(fx.descriptor("docs.search").idempotency(idempotency).singleTenant().build().singleTenant()).isTrue();
    assertThatThrownBy(() -> fx.descriptor("docs.search").idempotency(idempotency).singleTenant()
        .idempotencyNamespace(ctx -> ctx.get(TENANT)).build()).hasMessageContaining("keep one");
    assertThatThrownBy(() -> fx.descriptor("docs.search").singleTenant().build())
        .hasMessageContaining("no idempotency");
  }

  @Test
  void twoTenantsWithTheSameArgumentsEachRunOnceAndGetTheirOwnResult() {
    Tool<Search, String> docs = Tool.of(fx.descriptor("docs.search").sideEffect(SideEffect.IDEMPOTENT_WRITE)
            .idempotency(idempotency).idempotencyNamespace(ctx -> ctx.get(TENANT)).build(),
        this::search, String.class);
    Search salaries = new Search("salaries");
    StepVerifier.withVirtualTime(() -> docs.call(salaries).contextWrite(Context.of(TENANT, "acme"))
            .concatWith(docs.call(salaries).contextWrite(Context.of(TENANT, "globex")))
            .concatWith(docs.call(salaries).contextWrite(Context.of(TENANT, "acme")))
            .concatWith(docs.call(salaries).contextWrite(Context.of(TENANT, "globex"))))
        .expectNext("documents of acme matching salaries", "documents of globex matching salaries",
            "documents of acme matching salaries", "documents of globex matching salaries")
        .expectComplete().verify(VERIFY);
    assertThat(runs).as("one run per tenant; the repeats are idempotent hits").hasValue(2);
  }

  @Test
  void aCallWithoutATenantInItsContextFailsAsMisconfiguredWithoutRunning() {
    Tool<Search, String> docs = Tool.of(fx.descriptor("docs.search").idempotency(idempotency)
            .idempotencyNamespace(ctx -> ctx.getOrDefault(TENANT, null)).build(),
        this::search, String.class);
    Tool<Search, String> throwing = Tool.of(fx.descriptor("docs.find").idempotency(idempotency)
            .idempotencyNamespace(ctx -> ctx.get(TENANT)).build(),
        this::search, String.class);
    for (Tool<Search, String> tool : List.of(docs, throwing)) {
      StepVerifier.withVirtualTime(() -> tool.outcome(new Search("salaries")))
          .assertNext(o -> {
            ToolOutcome.Failure<String> failure = (ToolOutcome.Failure<String>) o;
            assertThat(failure.error()).isInstanceOf(ToolMisconfiguredException.class)
                .hasMessageContaining("Context");
            assertThat(failure.feedback().kind()).isEqualTo(FailureKind.MISCONFIGURED);
          })
          .expectComplete().verify(VERIFY);
    }
    StepVerifier.withVirtualTime(() -> docs.call(new Search("x")).contextWrite(Context.of(TENANT, "a:b")))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(ToolMisconfiguredException.class)
            .hasMessageContaining("not a plain name"))
        .verify(VERIFY);
    assertThat(runs).hasValue(0);
  }

  @Test
  void ownKeysMustBeInTheContextsNamespace() {
    Tool<Search, String> docs = Tool.of(fx.descriptor("docs.search").idempotency(idempotency)
            .idempotencyNamespace(ctx -> ctx.get(TENANT)).build(),
        this::search, String.class);
    Tool<Search, String> tenantBlind = docs.withIdempotencyKey(s -> IdempotencyKey.explicit("docs.search",
        s.query(), s));
    Tool<Search, String> tenantAware = docs.withIdempotencyKey((s, ctx) -> IdempotencyKey.explicit(ctx.get(TENANT),
        "docs.search", s.query(), s));
    StepVerifier.withVirtualTime(() -> tenantBlind.call(new Search("salaries")).contextWrite(Context.of(TENANT,
            "acme")))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(ToolMisconfiguredException.class)
            .hasMessageContaining("namespace"))
        .verify(VERIFY);
    StepVerifier.withVirtualTime(() -> tenantAware.call(new Search("salaries")).contextWrite(Context.of(TENANT,
            "acme")).concatWith(tenantAware.call(new Search("salaries")).contextWrite(Context.of(TENANT, "globex"))))
        .expectNext("documents of acme matching salaries", "documents of globex matching salaries")
        .expectComplete().verify(VERIFY);
  }
}
