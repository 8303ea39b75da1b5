package io.breakwater.internal.boot;

import io.breakwater.boot.BreakwaterProperties;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.spring.webflux.BreakwaterExchangeFilter;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * {@link BreakwaterExchangeFilter} on every {@code WebClient.Builder} Spring Boot builds, when the application has the
 * {@code breakwater-spring-webflux} module ({@code breakwater.webclient.*}). The filter sends the deadline header named
 * by {@code breakwater.deadline.header}, the same header the inbound {@code DeadlineWebFilter} reads, and the
 * idempotency key's keyed form to the hosts of {@code breakwater.idempotency.send-key-to-hosts} (none by default).
 *
 * <p>Backs off: an application's own {@code BreakwaterExchangeFilter} bean is the one registered; a
 * {@code WebClientCustomizer} bean named {@code breakwaterWebClientCustomizer}, or
 * {@code breakwater.webclient.enabled=false}, leaves the builders alone.
 */
@AutoConfiguration(after = BreakwaterAutoConfiguration.class)
@ConditionalOnClass({BreakwaterExchangeFilter.class, WebClient.class, WebClientCustomizer.class})
@ConditionalOnBooleanProperty(name = "breakwater.webclient.enabled", matchIfMissing = true)
public class BreakwaterWebClientAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  BreakwaterExchangeFilter breakwaterExchangeFilter(BreakwaterProperties properties) {
    String header = properties.deadline().header();
    BreakwaterExchangeFilter.Builder filter = BreakwaterExchangeFilter.builder();
    FromProperties.checked("breakwater.deadline.header", () -> filter.deadlineHeader(DeadlineHeader.named(header)));
    // the idempotency key goes only to the hosts listed (none by default): a Boot-built WebClient calls third parties
    // too, and even the key's keyed form is for the dependencies that dedupe on it
    FromProperties.checked("breakwater.idempotency.send-key-to-hosts",
        () -> filter.idempotencyKeyHosts(properties.idempotency().sendKeyToHosts()));
    return filter.build();
  }

  /** Adds the filter once, last (nearest the exchange), so a cloned or re-customized builder holds it once. */
  @Bean
  @ConditionalOnMissingBean(name = "breakwaterWebClientCustomizer")
  WebClientCustomizer breakwaterWebClientCustomizer(BreakwaterExchangeFilter filter) {
    return builder -> builder.filters(filters -> {
      if (!filters.contains(filter)) {
        filters.add(filter);
      }
    });
  }
}
