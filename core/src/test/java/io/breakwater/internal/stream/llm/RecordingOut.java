package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmStreamException;
import java.util.ArrayList;
import java.util.List;

/** Records what a decoder reports: its deltas, terminal signals and failures; every sequence number is new. */
final class RecordingOut implements DialectDecoder.Out {

  final List<LlmDelta> deltas = new ArrayList<>();
  final List<LlmStreamException> failures = new ArrayList<>();
  int terminals;

  @Override
  public void delta(LlmDelta delta) {
    deltas.add(delta);
  }

  @Override
  public void terminal() {
    terminals++;
  }

  @Override
  public void fail(LlmStreamException error) {
    failures.add(error);
  }

  @Override
  public void raw(String type, JsonNode json) {
    // the raw events are not under test here
  }

  @Override
  public boolean sequence(long number) {
    return true;
  }
}
