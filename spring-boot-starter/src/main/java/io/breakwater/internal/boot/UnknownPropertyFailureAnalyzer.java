package io.breakwater.internal.boot;

import io.breakwater.boot.BreakwaterProperties;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;

/**
 * Reports a {@code breakwater.*} property that Breakwater does not know, before Boot's generic "left unbound": a name
 * with dots written without brackets ({@code breakwater.tools.flights.search.side-effect}) gets the bracketed
 * property to write, and a misspelt setting gets its close match. Other unbound properties are left to Boot.
 */
public final class UnknownPropertyFailureAnalyzer extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException>
    implements Ordered {

  /** The maps of named settings, by prefix, with the settings of each entry. */
  private static final Map<String, Set<String>> MAPS = maps();

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE;
  }

  @Override
  protected @Nullable FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
    List<String> descriptions = new ArrayList<>();
    List<String> actions = new ArrayList<>();
    for (ConfigurationProperty property : cause.getUnboundProperties()) {
      String name = property.getName().toString();
      if (!name.startsWith("breakwater.")) {
        return null;
      }
      descriptions.add("'" + name + "' (value '" + property.getValue() + "'"
          + (property.getOrigin() == null ? "" : ", from " + property.getOrigin()) + ")");
      actions.add(fix(name));
    }
    return new FailureAnalysis("Breakwater does not know the properties " + String.join(", ", descriptions) + ".",
        String.join("\n", actions), cause);
  }

  /** What to write instead of {@code name}. */
  static String fix(String name) {
    for (Map.Entry<String, Set<String>> map : MAPS.entrySet()) {
      String prefix = map.getKey();
      if (!name.startsWith(prefix + ".") && !name.startsWith(prefix + "[")) {
        continue;
      }
      Set<String> settings = map.getValue();
      String rest = name.substring(prefix.length());
      if (rest.startsWith("[")) {
        int close = rest.indexOf(']');
        String setting = close < 0 || close + 2 > rest.length() ? "" : rest.substring(close + 2).split("\\.")[0];
        return misspelt(name, setting, settings, prefix);
      }
      String[] segments = rest.substring(1).split("\\.");
      for (int i = 2; i < segments.length; i++) {
        if (settings.contains(segments[i])) {
          String key = String.join(".", Arrays.copyOfRange(segments, 0, i));
          String leaf = String.join(".", Arrays.copyOfRange(segments, i, segments.length));
          return "'" + key + "' has dots, so it must be in brackets: write " + prefix + "[" + key + "]." + leaf
              + " (in YAML, quote the bracketed key: \"[" + key + "]\":).";
        }
      }
      return misspelt(name, segments.length > 1 ? segments[1] : "", settings, prefix);
    }
    return "Remove '" + name + "', or correct it: docs/spring-boot.md lists every breakwater.* property.";
  }

  private static String misspelt(String name, String setting, Set<String> settings, String prefix) {
    String match = Names.closeMatch(setting, settings);
    return (match == null ? "'" + setting + "' is not a setting of " + prefix + ".<name>. "
        : "Did you mean '" + match + "' instead of '" + setting + "'? ")
        + "Its settings: " + Names.list(settings) + ". Correct or remove '" + name + "'.";
  }

  private static Map<String, Set<String>> maps() {
    Map<String, Set<String>> maps = new LinkedHashMap<>();
    maps.put("breakwater.tools", settings(BreakwaterProperties.Tool.class));
    maps.put("breakwater.breakers.instances", settings(BreakwaterProperties.BreakerSettings.class));
    maps.put("breakwater.breakers.families", settings(BreakwaterProperties.BreakerSettings.class));
    maps.put("breakwater.retry.policies", settings(BreakwaterProperties.RetrySettings.class));
    maps.put("breakwater.retry.budgets", settings(BreakwaterProperties.BudgetSettings.class));
    maps.put("breakwater.limits.concurrency", settings(BreakwaterProperties.ConcurrencySettings.class));
    maps.put("breakwater.limits.rate", settings(BreakwaterProperties.RateSettings.class));
    return maps;
  }

  /** The settings of a record, as written in properties: {@code sideEffect} is {@code side-effect}. */
  private static Set<String> settings(Class<? extends Record> type) {
    return Arrays.stream(type.getRecordComponents()).map(RecordComponent::getName)
        .map(n -> n.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT))
        .collect(Collectors.toUnmodifiableSet());
  }
}
