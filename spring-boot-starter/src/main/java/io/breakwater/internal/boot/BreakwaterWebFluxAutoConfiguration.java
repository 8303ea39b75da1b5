package io.breakwater.internal.boot;

import io.breakwater.boot.BreakwaterProperties;
import io.breakwater.boot.DeadlineDefaults;
import io.breakwater.boot.web.DeadlineWebFilter;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.server.WebFilter;

/** The inbound deadline filter, in a reactive web application ({@code breakwater.deadline.inbound.*}). */
@AutoConfiguration(after = BreakwaterAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(WebFilter.class)
public class BreakwaterWebFluxAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBooleanProperty(name = "breakwater.deadline.inbound.enabled", matchIfMissing = true)
  DeadlineWebFilter breakwaterDeadlineWebFilter(BreakwaterProperties properties, DeadlineDefaults deadlines) {
    BreakwaterProperties.Deadline d = properties.deadline();
    return FromProperties.checked("breakwater.deadline", () -> new DeadlineWebFilter(d.header(), d.inbound().max(),
        d.inbound().defaultBudget(), deadlines));
  }
}
