package io.breakwater.internal.stream.llm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmStreamException;
import io.breakwater.stream.llm.TokenUsage;
import org.junit.jupiter.api.Test;

/**
 * What every dialect shares: counts from the server read with saturation, usage reports merged field by field, and
 * errors in their providers' shapes, masked.
 */
class DialectDecoderTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final RecordingOut out = new RecordingOut();
  private final DialectDecoder decoder = DialectDecoder.of(Dialect.OPENAI_CHAT, JSON, "llm:test",
      text -> text.replace("sk-secret", "[redacted]"));

  private static JsonNode json(String text) {
    try {
      return JSON.readTree(text);
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
  }

  private static LlmDelta.Usage usage(long in, long out, long total, long cached, long reasoning) {
    return new LlmDelta.Usage(new TokenUsage(in, out, total, cached, reasoning));
  }

  @Test
  void aCountIsANonNegativeIntegerAndAHugeOneSaturates() {
    assertThat(DialectDecoder.count(null)).isEqualTo(-1);
    assertThat(DialectDecoder.count(json("\"12\""))).as("a string is not a count").isEqualTo(-1);
    assertThat(DialectDecoder.count(json("0"))).isZero();
    assertThat(DialectDecoder.count(json("7"))).isEqualTo(7);
    assertThat(DialectDecoder.count(json("-1"))).isEqualTo(-1);
    assertThat(DialectDecoder.count(json("100000000000000000000000000000"))).isEqualTo(Long.MAX_VALUE);
    assertThat(DialectDecoder.count(json("1e30"))).isEqualTo(Long.MAX_VALUE);
    assertThat(DialectDecoder.count(json("-1e30"))).isEqualTo(-1);
  }

  @Test
  void aSumSaturatesAtTheLargestLong() {
    assertThat(DialectDecoder.saturatedAdd(0, 0)).isZero();
    assertThat(DialectDecoder.saturatedAdd(3, 4)).isEqualTo(7);
    assertThat(DialectDecoder.saturatedAdd(Long.MAX_VALUE, 1)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aReportWithoutAnyCountGivesNoUsageAndACountOfZeroIsACount() {
    decoder.usage(-1, -1, -1, -1, -1, out);
    assertThat(out.deltas).isEmpty();
    decoder.usage(0, -1, -1, -1, -1, out);
    decoder.usage(-1, 0, -1, -1, -1, out);
    decoder.usage(-1, -1, 0, -1, -1, out);
    decoder.usage(-1, -1, -1, 0, -1, out);
    decoder.usage(-1, -1, -1, -1, 0, out);
    assertThat(out.deltas).hasSize(5).allMatch(LlmDelta.Usage.class::isInstance);
  }

  @Test
  void eachCountGivenReplacesTheOneBeforeEvenWithZeroAndTheTotalIsTheSumUnlessGiven() {
    decoder.usage(10, 20, -1, 5, 3, out);
    decoder.usage(0, 0, -1, 0, 0, out);
    decoder.usage(-1, 7, -1, -1, -1, out);
    decoder.usage(-1, -1, 0, -1, -1, out);
    decoder.usage(Long.MAX_VALUE, -1, -1, -1, -1, out);
    assertThat(out.deltas).containsExactly(
        usage(10, 20, 30, 5, 3),
        usage(0, 0, 0, 0, 0),
        usage(0, 7, 7, 0, 0),
        usage(0, 7, 0, 0, 0),
        usage(Long.MAX_VALUE, 7, 0, 0, 0));
  }

  @Test
  void theTotalOfHugeCountsSaturates() {
    decoder.usage(Long.MAX_VALUE, 1, -1, -1, -1, out);
    assertThat(out.deltas).containsExactly(usage(Long.MAX_VALUE, 1, Long.MAX_VALUE, 0, 0));
  }

  @Test
  void errorsInEachProvidersShapeKeepTheirTypeCodeAndMaskedMessage() {
    // OpenAI: {"error": {"message", "type", "code"}}
    LlmStreamException openAi = decoder.error(json(
        "{\"error\":{\"message\":\"key sk-secret is over quota\",\"type\":\"insufficient_quota\",\"code\":\"q\"}}"));
    assertThat(openAi.errorType()).isEqualTo("insufficient_quota");
    assertThat(openAi.errorCode()).isEqualTo("q");
    assertThat(openAi).hasMessageContaining("key [redacted] is over quota").hasMessageNotContaining("sk-secret");
    // Gemini: {"error": {"code": 429, "message", "status"}}: the status is the type
    LlmStreamException gemini = decoder.error(json(
        "{\"error\":{\"code\":429,\"message\":\"slow down\",\"status\":\"RESOURCE_EXHAUSTED\"}}"));
    assertThat(gemini.errorType()).isEqualTo("RESOURCE_EXHAUSTED");
    assertThat(gemini.errorCode()).isEqualTo("429");
    // a type wins over a status
    assertThat(decoder.error(json("{\"error\":{\"type\":\"server_error\",\"status\":\"UNAVAILABLE\"}}")).errorType())
        .isEqualTo("server_error");
    // Anthropic's error event wrapped once more: {"error": {"type": "error", "error": {..}}}
    LlmStreamException wrapped = decoder.error(json(
        "{\"error\":{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}}"));
    assertThat(wrapped.errorType()).isEqualTo("overloaded_error");
    assertThat(wrapped).hasMessageContaining("Overloaded");
    // {"type": "error"} without an inner object: no type, the object as the message
    LlmStreamException bare = decoder.error(json("{\"type\":\"error\",\"detail\":\"x\"}"));
    assertThat(bare.errorType()).isEmpty();
    assertThat(bare).hasMessageContaining("detail");
    // a bare string
    assertThat(decoder.error(json("{\"error\":\"sk-secret refused\"}"))).hasMessageContaining("[redacted] refused");
  }

  @Test
  void anErrorObjectInAnEventFailsTheStreamAndInvalidOrEmptyDataSaysSo() {
    assertThat(decoder.parseUnlessError("message", "{\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}",
        out)).isNull();
    assertThat(decoder.parseUnlessError("message", "{\"error\":null,\"id\":\"x\"}", out)).isNotNull();
    assertThat(decoder.parse("message", "", out)).isNull();
    assertThat(decoder.parse("message", "{not json", out)).isNull();
    assertThat(out.failures).extracting(LlmStreamException::errorType)
        .containsExactly("server_error", "invalid_json", "invalid_json");
    assertThat(out.failures.get(1)).hasMessageContaining("empty event data");
    assertThat(out.failures.get(2)).hasMessageContaining("unparseable event data: {not json");
  }

  @Test
  void aDialectThatCannotResumeSaysSoFromTheStart() {
    for (Dialect dialect : Dialect.values()) {
      assertThat(DialectDecoder.of(dialect, JSON, "llm:test", t -> t).canResume()).as(dialect.name()).isFalse();
    }
  }
}
