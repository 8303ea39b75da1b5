package io.breakwater.internal.boot;

import io.breakwater.boot.BreakwaterProperties;
import io.breakwater.boot.Limits;
import io.breakwater.boot.RetryPolicies;
import io.breakwater.boot.actuate.BreakersHealthIndicator;
import io.breakwater.boot.actuate.BreakwaterEndpoint;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.server.WebFilter;

/** The {@code breakwater} health contributor and Actuator endpoint, when Actuator is on the class path. */
@AutoConfiguration(after = BreakwaterAutoConfiguration.class)
public class BreakwaterActuatorAutoConfiguration {

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(ReactiveHealthIndicator.class)
  @ConditionalOnEnabledHealthIndicator("breakwater")
  static class Health {

    @Bean(name = "breakwaterHealthIndicator")
    @ConditionalOnMissingBean(name = "breakwaterHealthIndicator")
    @ConditionalOnBean(CircuitBreakerRegistry.class)
    BreakersHealthIndicator breakwaterHealthIndicator(CircuitBreakerRegistry registry,
        BreakwaterProperties properties) {
      String status = properties.health().openStatus();
      return FromProperties.checked("breakwater.health.open-status", () -> {
        if (status == null || status.isBlank()) {
          throw new IllegalArgumentException("is blank: give DEGRADED or DOWN");
        }
        return new BreakersHealthIndicator(registry, new Status(status.trim().toUpperCase(Locale.ROOT)));
      });
    }
  }

  /** A bare 405 to a write while the endpoint is read-only becomes one that says what to set. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"org.springframework.boot.actuate.endpoint.annotation.Endpoint",
      "org.springframework.web.server.WebFilter"})
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  @ConditionalOnAvailableEndpoint(BreakwaterEndpoint.class)
  static class WriteAccess {

    @Bean
    WebFilter breakwaterEndpointWriteAccessFilter(Environment environment) {
      return new EndpointWriteAccessFilter(environment.getProperty("management.endpoints.web.base-path",
          "/actuator"));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(Endpoint.class)
  @ConditionalOnAvailableEndpoint(BreakwaterEndpoint.class)
  static class Operations {

    @Bean
    @ConditionalOnMissingBean
    BreakwaterEndpoint.LimitsReport breakwaterLimitsReport(ObjectProvider<Limits> limits) {
      return () -> {
        Limits all = limits.getIfAvailable();
        if (all == null) {
          return Map.of();
        }
        Map<String, Object> concurrency = new TreeMap<>();
        all.concurrencyNames().forEach(name -> {
          ConcurrencyLimit limit = all.concurrency(name);
          concurrency.put(name, Map.of("limit", limit.limit(), "inFlight", limit.inFlight(),
              "queued", limit.queued()));
        });
        Map<String, Object> rate = new TreeMap<>();
        all.rateNames().forEach(name -> {
          RateLimit limit = all.rate(name);
          rate.put(name, Map.of("availableRequests", limit.availableRequests(),
              "availableTokens", limit.availableTokens(), "queued", limit.queued()));
        });
        return Map.of("concurrency", concurrency, "rate", rate);
      };
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean({CircuitBreakerRegistry.class, RetryPolicies.class})
    BreakwaterEndpoint breakwaterEndpoint(CircuitBreakerRegistry breakers, RetryPolicies policies,
        BreakwaterEndpoint.LimitsReport limits) {
      return new BreakwaterEndpoint(breakers, policies, limits);
    }
  }
}
