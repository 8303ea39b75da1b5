package io.breakwater.internal.hedge;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one JSON event per hedged call (a call whose hedge delay passed while it was running) to a consumer, by
 * default the SLF4J logger {@code breakwater.hedge.calls} at INFO; nothing is built when that level is off.
 */
final class HedgeEvents {

  static final String LOGGER = "breakwater.hedge.calls";

  private static final Logger LOG = LoggerFactory.getLogger(LOGGER);
  private static final ObjectMapper MAPPER = new ObjectMapper();

  @Nullable
  private final Consumer<String> sink;

  HedgeEvents(@Nullable Consumer<String> sink) {
    this.sink = sink;
  }

  boolean enabled() {
    return sink != null || LOG.isInfoEnabled();
  }

  ObjectNode event() {
    return MAPPER.createObjectNode();
  }

  void emit(ObjectNode event) {
    String json;
    try {
      json = MAPPER.writeValueAsString(event);
    } catch (JsonProcessingException e) {
      json = "{\"event\":\"hedged_call\",\"error\":\"unserialisable event\"}";
    }
    if (sink != null) {
      sink.accept(json);
    } else {
      LOG.info(json);
    }
  }
}
