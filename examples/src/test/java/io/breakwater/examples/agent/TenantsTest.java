package io.breakwater.examples.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.examples.agent.Tenants.Search;
import io.breakwater.idempotency.IdempotencyStore;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class TenantsTest {

  @Test
  void eachTenantRunsOnceAndGetsItsOwnResult() {
    AtomicInteger runs = new AtomicInteger();
    var documents = Tenants.documents(IdempotencyStore.inMemory(), s -> Mono.deferContextual(ctx -> {
      runs.incrementAndGet();
      return Mono.just("documents of " + ctx.get(Tenants.TENANT) + " matching " + s.query());
    }));
    Search salaries = new Search("salaries");
    StepVerifier.create(Tenants.searchAs("acme", documents, salaries)
            .concatWith(Tenants.searchAs("globex", documents, salaries))
            .concatWith(Tenants.searchAs("acme", documents, salaries)))
        .expectNext("documents of acme matching salaries", "documents of globex matching salaries",
            "documents of acme matching salaries")
        .verifyComplete();
    assertThat(runs).hasValue(2);
  }
}
