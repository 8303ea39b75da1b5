package io.breakwater.internal.agent;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one JSON event per tool call to a consumer, by default the SLF4J logger {@code breakwater.tool.calls} at
 * INFO (nothing is built when that level is off).
 */
public final class CallEvents {

  public static final String LOGGER = "breakwater.tool.calls";

  private static final Logger LOG = LoggerFactory.getLogger(LOGGER);
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final @Nullable Consumer<String> sink;

  public CallEvents(@Nullable Consumer<String> sink) {
    this.sink = sink;
  }

  /** Whether events are wanted at all. */
  public boolean enabled() {
    return sink != null || LOG.isInfoEnabled();
  }

  /** A new, empty event to fill. */
  public ObjectNode event() {
    return MAPPER.createObjectNode();
  }

  public void emit(ObjectNode event) {
    String json;
    try {
      json = MAPPER.writeValueAsString(event);
    } catch (JsonProcessingException e) {
      json = "{\"event\":\"tool_call\",\"error\":\"unserialisable event\"}";
    }
    if (sink != null) {
      sink.accept(json);
    } else {
      LOG.info(json);
    }
  }
}
