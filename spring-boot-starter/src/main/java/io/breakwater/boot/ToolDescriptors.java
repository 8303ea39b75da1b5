package io.breakwater.boot;

import io.breakwater.agent.ToolDescriptor;
import io.breakwater.internal.boot.UnknownNameException;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The tool descriptors configured under {@code breakwater.tools}, by tool name, with the application's breaker
 * registry, retry policies, idempotency policy, meter and observation registries already in them. A
 * {@code ToolDescriptor} bean wins over the configuration of the tool of the same name.
 *
 * <pre>{@code
 * Tool<Query, Forecast> forecast = Tool.of(tools.descriptor("weather.forecast"), client::forecast, Forecast.class);
 * }</pre>
 *
 * <p>Every configured descriptor is built, and so validated, at start-up. Immutable and thread-safe.
 */
public final class ToolDescriptors {

  private final Map<String, ToolDescriptor> descriptors;
  private final Function<String, ToolDescriptor.Builder> builders;

  /**
   * The {@code descriptors} by name, and {@code builders}: a builder with a configured tool's settings, so that code
   * can add what a property cannot say (an event log, a classifier).
   */
  public ToolDescriptors(Map<String, ToolDescriptor> descriptors, Function<String, ToolDescriptor.Builder> builders) {
    this.descriptors = Map.copyOf(descriptors);
    this.builders = Objects.requireNonNull(builders, "builders");
  }

  /**
   * The descriptor of {@code toolName}.
   *
   * @throws IllegalArgumentException if no tool of that name is configured, saying which property to add
   */
  public ToolDescriptor descriptor(String toolName) {
    ToolDescriptor descriptor = descriptors.get(Objects.requireNonNull(toolName, "toolName"));
    if (descriptor == null) {
      throw notConfigured(toolName);
    }
    return descriptor;
  }

  /**
   * A builder holding the configuration of {@code toolName}, to add settings in code before {@code build()}.
   *
   * @throws IllegalArgumentException if no tool of that name is configured
   */
  public ToolDescriptor.Builder builder(String toolName) {
    if (!descriptors.containsKey(Objects.requireNonNull(toolName, "toolName"))) {
      throw notConfigured(toolName);
    }
    return builders.apply(toolName);
  }

  /** The names of the configured tools. */
  public Set<String> names() {
    return descriptors.keySet();
  }

  private IllegalArgumentException notConfigured(String toolName) {
    return new UnknownNameException("tool", toolName, descriptors.keySet(), "add breakwater.tools[" + toolName
        + "].side-effect (and its other settings) to application.yml, or define a ToolDescriptor bean named after it");
  }
}
