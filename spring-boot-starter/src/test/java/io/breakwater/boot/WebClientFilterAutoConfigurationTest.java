package io.breakwater.boot;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.internal.boot.BreakwaterAutoConfiguration;
import io.breakwater.internal.boot.InvalidPropertiesException;
import io.breakwater.internal.boot.BreakwaterWebClientAutoConfiguration;
import io.breakwater.spring.webflux.BreakwaterExchangeFilter;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * With {@code breakwater-spring-webflux} on the classpath, every Boot-built {@code WebClient} carries
 * {@link BreakwaterExchangeFilter}; the application can replace the filter or turn it off. The exchange is a function
 * that records the request and answers 429, so what the filter sends and what the caller sees are both checked.
 */
class WebClientFilterAutoConfigurationTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(BreakwaterAutoConfiguration.class,
          BreakwaterWebClientAutoConfiguration.class, WebClientAutoConfiguration.class));

  private final List<ClientRequest> sent = new CopyOnWriteArrayList<>();

  /** An API that answers every request 429 with a Retry-After and a body. */
  private final ExchangeFunction rateLimited = request -> {
    sent.add(request);
    return Mono.just(ClientResponse.create(HttpStatus.TOO_MANY_REQUESTS)
        .header("Retry-After", "7")
        .header("Content-Type", "text/plain")
        .body("slow down")
        .build());
  };

  private Mono<String> callUnderDeadline(WebClient.Builder boots) {
    return boots.exchangeFunction(rateLimited).build()
        .get().uri("http://api.test/flights").retrieve().bodyToMono(String.class)
        .transformDeferred(withDeadline(Duration.ofSeconds(5)));
  }

  @Test
  void aBootBuiltWebClientSendsTheConfiguredDeadlineHeaderAndFailsA429WithItsHeaders() {
    runner.withPropertyValues("breakwater.deadline.header=X-Time-Left").run(context -> {
      assertThat(context).hasSingleBean(BreakwaterExchangeFilter.class);

      StepVerifier.create(callUnderDeadline(context.getBean(WebClient.Builder.class)))
          .expectErrorSatisfies(error -> {
            assertThat(error).isInstanceOf(HttpStatusException.class);
            HttpStatusException status = (HttpStatusException) error;
            assertThat(status.status()).isEqualTo(429);
            assertThat(status.headers()).containsKey("Retry-After");
            assertThat(status.getMessage()).contains("slow down");
          })
          .verify(Duration.ofSeconds(30));

      assertThat(sent).hasSize(1);
      String timeLeft = sent.get(0).headers().getFirst("X-Time-Left");
      assertThat(timeLeft).as("the configured deadline header").isNotNull();
      assertThat(DeadlineHeader.parse(timeLeft)).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5).toNanos());
      assertThat(sent.get(0).headers().containsHeader(DeadlineHeader.DEFAULT_NAME)).isFalse();
    });
  }

  @Test
  void aBootBuiltWebClientSendsNoIdempotencyKeyToTheHostItCalls() {
    runner.run(context -> {
      Mono<String> call = context.getBean(WebClient.Builder.class).exchangeFunction(rateLimited).build()
          .post().uri("http://third-party.test/transfer").retrieve().bodyToMono(String.class)
          .transformDeferred(idempotentBy(IdempotencyKey.explicit("bank.transfer", "t-1", Map.of("pin", "1234")),
              IdempotencyPolicy.builder(IdempotencyStore.inMemory()).keySecret(new byte[32]).build(),
              String.class));
      StepVerifier.create(call).expectError(HttpStatusException.class).verify(Duration.ofSeconds(30));
      assertThat(sent).hasSize(1);
      assertThat(sent.get(0).headers().containsHeader("Idempotency-Key")).as("the plain key, naming the tenant")
          .isFalse();
    });
  }

  /** A base64 secret of 32 bytes, as {@code openssl rand -base64 32} prints one. */
  private static final String KEY_SECRET = Base64.getEncoder().encodeToString(new byte[32]);

  /** What a Boot-built client sent as the key for a transfer posted to {@code url}; {@code null}: no header. */
  private String keySentTo(ApplicationContext context, String url, IdempotencyKey key) {
    sent.clear();
    Mono<String> call = context.getBean(WebClient.Builder.class).exchangeFunction(rateLimited).build()
        .post().uri(url).retrieve().bodyToMono(String.class)
        .transformDeferred(idempotentBy(key, context.getBean(IdempotencyPolicy.class), String.class));
    StepVerifier.create(call).expectError(HttpStatusException.class).verify(Duration.ofSeconds(30));
    assertThat(sent).hasSize(1);
    return sent.get(0).headers().getFirst("Idempotency-Key");
  }

  /** Issue 36 (security 4): the key goes to the hosts listed, in its keyed form only, and to no other host. */
  @Test
  void theKeyGoesOnlyToTheListedHostsAndOnlyInItsKeyedForm() {
    runner.withPropertyValues("breakwater.idempotency.send-key-to-hosts=payments.test,API.Stripe.com",
            "breakwater.idempotency.key-secret=" + KEY_SECRET)
        .run(context -> {
          assertThat(context).hasNotFailed();
          IdempotencyKey transfer = IdempotencyKey.builder("bank.transfer").namespace("acme-bank")
              .args(Map.of("pin", "1234")).build();
          String keyed = context.getBean(IdempotencyPolicy.class).sentKey(transfer);

          assertThat(keySentTo(context, "http://payments.test/transfer", transfer)).isEqualTo(keyed)
              .matches("[0-9a-f]{64}").doesNotContain("acme-bank").doesNotContain(transfer.fingerprint());
          assertThat(keySentTo(context, "https://api.stripe.com/v1/charges",
              IdempotencyKey.explicit("bank.transfer", "t-2", 1))).isNotNull();
          assertThat(keySentTo(context, "http://third-party.test/transfer",
              IdempotencyKey.explicit("bank.transfer", "t-3", 1))).as("a host not listed").isNull();
        });
  }

  @Test
  void twoInstancesWithTheSameKeySecretSendTheSameValueForTheSameKey() {
    IdempotencyKey key = IdempotencyKey.explicit("acme-bank", "bank.transfer", "t-1", Map.of("amount", 10));
    ApplicationContextRunner instance = runner.withPropertyValues(
        "breakwater.idempotency.send-key-to-hosts=payments.test", "breakwater.idempotency.key-secret=" + KEY_SECRET);
    List<String> values = new CopyOnWriteArrayList<>();
    instance.run(first -> values.add(keySentTo(first, "http://payments.test/transfer", key)));
    instance.run(second -> values.add(keySentTo(second, "http://payments.test/transfer", key)));

    assertThat(values).hasSize(2).doesNotContainNull();
    assertThat(values.get(1)).as("the second instance, its own in-memory store").isEqualTo(values.get(0));
  }

  @Test
  void sendingTheKeyWithoutAKeySecretFailsStartUpSayingWhatToSet() {
    runner.withPropertyValues("breakwater.idempotency.send-key-to-hosts=payments.test").run(context -> {
      InvalidPropertiesException e = ValidationIT.refusal(context.getStartupFailure());
      assertThat(e.property()).isEqualTo("breakwater.idempotency.key-secret");
      assertThat(e.reason()).contains("send-key-to-hosts is").contains("the same on every instance");
    });
  }

  @Test
  void aKeyHostThatIsNotAHostNameFailsStartUpNamingTheProperty() {
    runner.withPropertyValues("breakwater.idempotency.send-key-to-hosts=https://api.stripe.com",
            "breakwater.idempotency.key-secret=" + KEY_SECRET)
        .run(context -> {
          InvalidPropertiesException e = ValidationIT.refusal(context.getStartupFailure());
          assertThat(e.property()).isEqualTo("breakwater.idempotency.send-key-to-hosts");
          assertThat(e.reason()).contains("'https://api.stripe.com' is not a host name: give the host only");
        });
  }

  @Test
  void aBuilderCustomizedTwiceOrClonedHoldsTheFilterOnce() {
    runner.run(context -> {
      BreakwaterExchangeFilter filter = context.getBean(BreakwaterExchangeFilter.class);
      WebClient.Builder builder = context.getBean(WebClient.Builder.class);
      context.getBeanProvider(WebClientCustomizer.class).orderedStream().forEach(c -> c.customize(builder));
      builder.clone().filters(filters -> assertThat(filters).containsOnlyOnce(filter));
    });
  }

  @Test
  void theApplicationsOwnFilterIsTheOneRegistered() {
    BreakwaterExchangeFilter own = BreakwaterExchangeFilter.builder()
        .deadlineHeader(DeadlineHeader.named("Request-Timeout")).build();
    runner.withBean(BreakwaterExchangeFilter.class, () -> own).run(context -> {
      assertThat(context.getBean(BreakwaterExchangeFilter.class)).isSameAs(own);
      context.getBean(WebClient.Builder.class).filters(filters -> assertThat(filters).containsOnlyOnce(own));
    });
  }

  @Test
  void theFilterCanBeTurnedOffOrReplacedByACustomizerOfTheSameName() {
    runner.withPropertyValues("breakwater.webclient.enabled=false").run(context -> {
      assertThat(context).doesNotHaveBean(BreakwaterExchangeFilter.class);
      context.getBean(WebClient.Builder.class).filters(filters -> assertThat(filters).isEmpty());
    });
    runner.withBean("breakwaterWebClientCustomizer", WebClientCustomizer.class, () -> builder -> { })
        .run(context -> context.getBean(WebClient.Builder.class).filters(filters -> assertThat(filters).isEmpty()));
  }

  @Test
  void withoutTheSpringWebfluxModuleNothingIsRegistered() {
    runner.withClassLoader(new FilteredClassLoader(BreakwaterExchangeFilter.class)).run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(BreakwaterExchangeFilter.class);
      assertThat(context).doesNotHaveBean("breakwaterWebClientCustomizer");
    });
  }

  @Test
  void aBadDeadlineHeaderNameFailsStartUpNamingTheProperty() {
    runner.withPropertyValues("breakwater.deadline.header=").run(context ->
        assertThat(context).getFailure().hasStackTraceContaining("breakwater.deadline.header"));
  }
}
