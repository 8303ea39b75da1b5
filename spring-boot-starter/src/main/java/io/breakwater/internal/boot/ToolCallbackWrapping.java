package io.breakwater.internal.boot;

import io.breakwater.agent.ToolDescriptor;
import io.breakwater.boot.ToolDescriptors;
import io.breakwater.springai.BreakwaterToolCallback;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Replaces each {@code ToolCallback} bean whose tool (its name as the model knows it) is configured under
 * {@code breakwater.tools} by a {@link BreakwaterToolCallback}, and each {@code ToolCallbackProvider} bean by one that
 * wraps its configured tools the same way. A tool that is not configured is left as it is, unless its name is a close
 * misspelling of a configured one: that configuration would guard nothing, so it fails (at start-up for a callback
 * bean, at the first {@code getToolCallbacks()} for a provider, which may discover its tools only then).
 */
final class ToolCallbackWrapping implements BeanPostProcessor {

  private final ObjectProvider<ToolDescriptors> descriptors;

  ToolCallbackWrapping(ObjectProvider<ToolDescriptors> descriptors) {
    this.descriptors = descriptors;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof BreakwaterToolCallback) {
      return bean;
    }
    if (bean instanceof ToolCallback callback) {
      ToolDescriptor descriptor = descriptor(callback.getToolDefinition().name(), beanName);
      return descriptor == null ? bean : BreakwaterToolCallback.of(callback, descriptor);
    }
    if (bean instanceof ToolCallbackProvider provider) {
      return BreakwaterToolCallback.wrap(provider, tool -> descriptor(tool, beanName));
    }
    return bean;
  }

  /** The descriptor configured for {@code tool}, or {@code null} if none is (and no configured name is close). */
  private @Nullable ToolDescriptor descriptor(String tool, String beanName) {
    ToolDescriptors configured = descriptors.getObject();
    if (configured.names().contains(tool)) {
      return configured.descriptor(tool);
    }
    String match = Names.closeMatch(tool, configured.names());
    if (match != null) {
      throw new InvalidPropertiesException(FromProperties.path("breakwater.tools", match), "configures the tool '"
          + match + "', while the bean '" + beanName + "' has the tool '" + tool + "', which no configuration "
          + "guards. If they are one tool, rename the configuration to " + FromProperties.path("breakwater.tools", tool)
          + " (the tool's name as the model knows it).", null);
    }
    return null;
  }
}
