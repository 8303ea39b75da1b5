package io.breakwater.stream.llm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.StreamTruncatedException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import reactor.core.publisher.Mono;

/**
 * A local check, run by hand, of the client against every recording in {@code shared/llm-recordings} (skipped where
 * it is absent; see {@link RecordedStreamsCheck#dir()}), whole, in random 1–7 byte pieces, and cut at every event
 * boundary. The expected values are computed here from the raw bytes by each provider's documented format, with a
 * small reader written independently of the client's decoders: events split at blank lines (SSE) or line ends
 * (NDJSON), each event's JSON read for the answer's text, reasoning, refusal, client tool calls, finish reason,
 * usage and citations, and how the stream ends (its terminal event, an error, or nothing).
 *
 * <pre>
 * mvn -B -pl core -am test -Dtest=RecordingsByFormatCheck -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
@EnabledIf("io.breakwater.stream.llm.RecordedStreamsCheck#present")
class RecordingsByFormatCheck {

  private static final ObjectMapper JSON = new ObjectMapper();
  /** The raw finish reasons the providers document as an answer cut short. */
  private static final Set<String> INCOMPLETE = Set.of("length", "max_tokens", "MAX_TOKENS", "pause_turn",
      "content_filter", "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII");

  enum Ending { COMPLETE, INCOMPLETE, ERROR, CUT }

  /** One event as the bytes give it, and the offset just after it. */
  record Event(String type, String data, int end) {}

  record Call(String id, String name, String args) {}

  /** What the events say, read by the provider's documented format. */
  static final class Expected {
    final StringBuilder text = new StringBuilder();
    final StringBuilder reasoning = new StringBuilder();
    final StringBuilder refusal = new StringBuilder();
    final Map<String, String[]> calls = new LinkedHashMap<>();   // key -> {id, name, args}
    String finish = "";
    long input = -1;
    long output = -1;
    int citations;
    boolean finished;
    Ending ending = Ending.CUT;

    boolean hasContent() {
      return text.length() > 0 || reasoning.length() > 0 || refusal.length() > 0 || !calls.isEmpty()
          || citations > 0;
    }

    String[] call(String key) {
      return calls.computeIfAbsent(key, k -> new String[] {"", "", ""});
    }
  }

  static Dialect dialect(String file) {
    return file.startsWith("openai-responses") ? Dialect.OPENAI_RESPONSES
        : file.startsWith("anthropic") ? Dialect.ANTHROPIC_MESSAGES
        : file.startsWith("gemini") || file.startsWith("vertex") ? Dialect.GEMINI
        : file.startsWith("ollama") ? Dialect.OLLAMA
        : Dialect.OPENAI_CHAT;
  }

  // ---- framing: SSE by the WHATWG rules the providers follow, NDJSON by lines ----

  static List<Event> events(byte[] body, boolean ndjson) {
    List<Event> events = new ArrayList<>();
    String type = "message";
    StringBuilder data = null;
    int start = 0;
    while (start < body.length) {
      int nl = start;
      while (nl < body.length && body[nl] != '\n') {
        nl++;
      }
      if (nl == body.length) {
        break;   // an unterminated last line is discarded
      }
      int end = nl > start && body[nl - 1] == '\r' ? nl - 1 : nl;
      String line = new String(body, start, end - start, StandardCharsets.UTF_8);
      start = nl + 1;
      if (ndjson) {
        if (!line.isBlank()) {
          events.add(new Event("message", line, start));
        }
        continue;
      }
      if (line.isEmpty()) {
        if (data != null) {
          events.add(new Event(type, data.toString(), start));
        }
        type = "message";
        data = null;
      } else if (!line.startsWith(":")) {
        int colon = line.indexOf(':');
        String field = colon < 0 ? line : line.substring(0, colon);
        String value = colon < 0 ? "" : line.substring(colon + 1);
        value = value.startsWith(" ") ? value.substring(1) : value;
        if (field.equals("event")) {
          type = value;
        } else if (field.equals("data")) {
          data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
        }
      }
    }
    return events;
  }

  // ---- the reader ----

  static Expected read(Dialect dialect, List<Event> events) {
    Expected x = new Expected();
    for (Event event : events) {
      if (x.ending != Ending.CUT) {
        break;
      }
      if (dialect == Dialect.OPENAI_CHAT && event.data().equals("[DONE]")) {
        x.ending = Ending.COMPLETE;
        break;
      }
      JsonNode json;
      try {
        json = JSON.readTree(event.data());
      } catch (IOException e) {
        throw new AssertionError("not JSON: " + event.data(), e);
      }
      switch (dialect) {
        case OPENAI_CHAT -> chat(event.type(), json, x);
        case OPENAI_RESPONSES -> responses(json, x);
        case ANTHROPIC_MESSAGES -> anthropic(event.type(), json, x);
        case GEMINI -> gemini(json, x);
        case OLLAMA -> ollama(json, x);
      }
    }
    if (dialect == Dialect.GEMINI && x.ending == Ending.CUT && x.finished) {
      x.ending = Ending.COMPLETE;
    }
    if (x.ending == Ending.COMPLETE && INCOMPLETE.contains(x.finish)) {
      x.ending = Ending.INCOMPLETE;
    }
    return x;
  }

  static String str(JsonNode node) {
    return node != null && node.isTextual() ? node.asText() : "";
  }

  static void chat(String type, JsonNode json, Expected x) {
    for (JsonNode choice : json.path("choices")) {
      if (choice.path("index").asInt(0) != 0) {
        continue;
      }
      JsonNode delta = choice.path("delta");
      JsonNode content = delta.get("content");
      if (content != null && content.isTextual()) {
        x.text.append(content.asText());
      } else if (content != null && content.isArray()) {
        for (JsonNode part : content) {
          if (str(part.get("type")).equals("thinking")) {
            part.path("thinking").forEach(t -> x.reasoning.append(str(t.get("text"))));
          } else {
            x.text.append(str(part.get("text")));
          }
        }
      }
      x.text.append(str(choice.get("text")));
      x.refusal.append(str(delta.get("refusal")));
      String reasoning = str(delta.get("reasoning_content"));
      if (reasoning.isEmpty()) {
        reasoning = str(delta.get("reasoning"));
      }
      if (reasoning.isEmpty()) {
        for (JsonNode d : delta.path("reasoning_details")) {
          if (str(d.get("type")).equals("reasoning.text")) {
            reasoning += str(d.get("text"));
          }
        }
      }
      x.reasoning.append(reasoning);
      for (JsonNode a : delta.path("annotations")) {
        x.citations += str(a.get("type")).equals("url_citation") ? 1 : 0;
      }
      for (JsonNode call : delta.path("tool_calls")) {
        String[] c = x.call(call.path("index").asText("0"));
        c[0] = c[0].isEmpty() ? str(call.get("id")) : c[0];
        c[1] = c[1].isEmpty() ? str(call.path("function").get("name")) : c[1];
        c[2] += str(call.path("function").get("arguments"));
      }
      if (!str(choice.get("finish_reason")).isEmpty()) {
        x.finish = str(choice.get("finish_reason"));
      }
    }
    JsonNode usage = json.path("usage").isObject() ? json.path("usage") : json.path("x_groq").path("usage");
    if (usage.isObject()) {
      x.input = usage.path("prompt_tokens").asLong(-1);
      x.output = usage.path("completion_tokens").asLong(-1);
    }
    if (type.equals("error") || (json.has("error") && !json.get("error").isNull())) {
      x.ending = Ending.ERROR;
    }
  }

  static void responses(JsonNode json, Expected x) {
    String type = str(json.get("type"));
    switch (type) {
      case "response.output_text.delta" -> x.text.append(str(json.get("delta")));
      case "response.refusal.delta" -> x.refusal.append(str(json.get("delta")));
      case "response.reasoning_summary_text.delta", "response.reasoning_text.delta" ->
          x.reasoning.append(str(json.get("delta")));
      case "response.output_text.annotation.added" -> x.citations++;
      case "response.output_item.added" -> {
        JsonNode item = json.path("item");
        if (str(item.get("type")).equals("function_call")) {
          String[] c = x.call(str(item.get("id")));
          c[0] = str(item.get("call_id"));
          c[1] = str(item.get("name"));
        }
      }
      case "response.function_call_arguments.delta" -> x.call(str(json.get("item_id")))[2] +=
          str(json.get("delta"));
      case "response.completed", "response.incomplete" -> {
        JsonNode usage = json.path("response").path("usage");
        x.input = usage.path("input_tokens").asLong(-1);
        x.output = usage.path("output_tokens").asLong(-1);
        x.finish = type.equals("response.completed") ? "completed"
            : str(json.path("response").path("incomplete_details").get("reason"));
        x.ending = type.equals("response.completed") ? Ending.COMPLETE : Ending.INCOMPLETE;
      }
      case "response.failed", "error" -> x.ending = Ending.ERROR;
      default -> { }
    }
  }

  static void anthropic(String type, JsonNode json, Expected x) {
    switch (str(json.get("type"))) {
      case "message_start" -> {
        JsonNode usage = json.path("message").path("usage");
        x.input = usage.path("input_tokens").asLong(-1);
        x.output = usage.path("output_tokens").asLong(-1);
      }
      case "content_block_start" -> {
        JsonNode block = json.path("content_block");
        String blockType = str(block.get("type"));
        if (blockType.equals("tool_use")) {
          String[] c = x.call(json.path("index").asText());
          c[0] = str(block.get("id"));
          c[1] = str(block.get("name"));
        } else if (blockType.equals("text")) {
          x.text.append(str(block.get("text")));
        } else if (blockType.equals("thinking")) {
          x.reasoning.append(str(block.get("thinking")));
        }
      }
      case "content_block_delta" -> {
        JsonNode delta = json.path("delta");
        switch (str(delta.get("type"))) {
          case "text_delta" -> x.text.append(str(delta.get("text")));
          case "thinking_delta" -> x.reasoning.append(str(delta.get("thinking")));
          case "citations_delta" -> x.citations++;
          case "input_json_delta" -> {
            String[] c = x.calls.get(json.path("index").asText());
            if (c != null) {   // a server tool's input is not a client call
              c[2] += str(delta.get("partial_json"));
            }
          }
          default -> { }
        }
      }
      case "message_delta" -> {
        x.finish = str(json.path("delta").get("stop_reason"));
        JsonNode usage = json.path("usage");
        if (usage.has("input_tokens") && !usage.get("input_tokens").isNull()) {
          x.input = usage.path("input_tokens").asLong();
        }
        if (usage.has("output_tokens")) {
          x.output = usage.path("output_tokens").asLong();
        }
      }
      case "message_stop" -> x.ending = Ending.COMPLETE;
      case "error" -> x.ending = Ending.ERROR;
      default -> {
        if (type.equals("error")) {
          x.ending = Ending.ERROR;
        }
      }
    }
  }

  static void gemini(JsonNode json, Expected x) {
    if (json.has("error")) {
      x.ending = Ending.ERROR;
      return;
    }
    for (JsonNode candidate : json.path("candidates")) {
      if (candidate.path("index").asInt(0) != 0) {
        continue;
      }
      for (JsonNode part : candidate.path("content").path("parts")) {
        if (part.has("text")) {
          (part.path("thought").asBoolean() ? x.reasoning : x.text).append(str(part.get("text")));
        } else if (part.has("functionCall")) {
          String[] c = x.call(String.valueOf(x.calls.size()));
          c[0] = str(part.path("functionCall").get("id"));
          c[1] = str(part.path("functionCall").get("name"));
          JsonNode args = part.path("functionCall").get("args");
          c[2] = args == null ? "{}" : args.toString();
        }
      }
      JsonNode meta = candidate.path("citationMetadata");
      x.citations += meta.path("citations").size() + meta.path("citationSources").size();
      if (!str(candidate.get("finishReason")).isEmpty()) {
        x.finish = str(candidate.get("finishReason"));
        x.finished = true;
      }
    }
    JsonNode usage = json.path("usageMetadata");
    if (usage.isObject()) {
      x.input = usage.path("promptTokenCount").asLong(0);
      x.output = usage.path("candidatesTokenCount").asLong(0);
    }
  }

  static void ollama(JsonNode json, Expected x) {
    if (json.has("error")) {
      x.ending = Ending.ERROR;
      return;
    }
    x.text.append(str(json.path("message").get("content"))).append(str(json.get("response")));
    x.reasoning.append(str(json.path("message").get("thinking"))).append(str(json.get("thinking")));
    for (JsonNode call : json.path("message").path("tool_calls")) {
      String[] c = x.call(String.valueOf(x.calls.size()));
      c[1] = str(call.path("function").get("name"));
      c[2] = call.path("function").path("arguments").toString();
    }
    if (json.path("done").asBoolean()) {
      x.finish = str(json.get("done_reason"));
      x.input = json.path("prompt_eval_count").asLong(-1);
      x.output = json.path("eval_count").asLong(-1);
      x.ending = Ending.COMPLETE;
    }
  }

  // ---- the client, and the comparison ----

  record Outcome(LlmResponse response, Throwable error) {}

  static Outcome run(Dialect dialect, Object... steps) {
    return LlmDialectsTest.client(dialect, ScriptedTransport.always(steps)).stream(LlmDialectsTest.REQUEST)
        .as(LlmResponse::aggregate)
        .map(r -> new Outcome(r, null))
        .onErrorResume(e -> Mono.just(new Outcome(null, e)))
        .block(Duration.ofSeconds(30));
  }

  /** The problems of {@code outcome} against {@code x}; empty when it matches. */
  static List<String> compare(Expected x, Outcome outcome) {
    List<String> problems = new ArrayList<>();
    Throwable e = outcome.error();
    LlmResponse r;
    switch (x.ending) {
      case COMPLETE -> {
        if (e != null) {
          problems.add("expected success, got " + e);
        }
        r = outcome.response();
      }
      case INCOMPLETE -> {
        if (!(e instanceof LlmIncompleteException)) {
          problems.add("expected LlmIncompleteException, got " + (e == null ? "success" : e));
        }
        r = e instanceof LlmIncompleteException i ? i.response() : outcome.response();
      }
      case ERROR -> {
        if (!(e instanceof LlmStreamException)) {
          problems.add("expected LlmStreamException, got " + (e == null ? "success" : e));
        }
        r = e instanceof LlmStreamException s ? s.partialResponse() : outcome.response();
      }
      default -> {
        if (e == null) {
          problems.add("expected a failure, got success");
        } else if (x.hasContent() && !(e instanceof StreamTruncatedException)) {
          problems.add("expected StreamTruncatedException, got " + e);
        } else if (e instanceof StreamTruncatedException t && !t.partialOutput().contains(x.text)) {
          problems.add("partialOutput lacks the text");
        }
        r = e == null ? outcome.response() : LlmResponse.partialOf(e).orElse(null);
        if (r == null && !x.hasContent()) {
          return problems;
        }
      }
    }
    if (r == null) {
      problems.add("no response");
      return problems;
    }
    check(problems, "text", x.text.toString(), r.text());
    check(problems, "reasoning", x.reasoning.toString(), r.reasoning());
    check(problems, "refusal", x.refusal.toString(), r.refusal());
    check(problems, "citations", x.citations, r.choice(0).citations().size());
    if (x.ending != Ending.CUT || x.hasContent()) {
      check(problems, "finish", x.finish, r.choice(0).rawFinishReason());
    }
    List<Call> expectedCalls = x.calls.values().stream().map(c -> new Call(c[0], c[1], c[2])).toList();
    List<ToolCall> calls = r.choice(0).toolCalls();
    check(problems, "tool calls", expectedCalls.size(), calls.size());
    for (int i = 0; i < Math.min(calls.size(), expectedCalls.size()); i++) {
      Call want = expectedCalls.get(i);
      ToolCall got = calls.get(i);
      check(problems, "call id", want.id(), got.id());
      check(problems, "call name", want.name(), got.name());
      if (!sameJson(want.args(), got.argumentsJson())) {
        problems.add("call args: expected " + want.args() + ", got " + got.argumentsJson());
      }
    }
    if (x.input >= 0 && (x.ending != Ending.CUT || x.hasContent())) {
      if (r.usage() == null) {
        problems.add("no usage, expected " + x.input + "/" + x.output);
      } else {
        check(problems, "input tokens", x.input, r.usage().inputTokens());
        check(problems, "output tokens", Math.max(0, x.output), r.usage().outputTokens());
      }
    }
    return problems;
  }

  static boolean sameJson(String want, String got) {
    String w = want.isBlank() ? "{}" : want;
    try {
      return JSON.readTree(w).equals(JSON.readTree(got));
    } catch (IOException notWhole) {
      return w.equals(got);
    }
  }

  static void check(List<String> problems, String what, Object want, Object got) {
    if (!Objects.equals(want, got)) {
      String w = String.valueOf(want);
      String g = String.valueOf(got);
      problems.add(what + ": expected " + (w.length() > 80 ? w.substring(0, 80) + "..." : w) + ", got "
          + (g.length() > 80 ? g.substring(0, 80) + "..." : g));
    }
  }

  @Test
  void everyRecordingWholeInPiecesAndCutAtEveryEventBoundary() throws IOException {
    Path dir = RecordedStreamsCheck.dir();
    List<Path> files;
    try (Stream<Path> list = Files.list(dir)) {
      files = list.filter(p -> p.toString().endsWith(".sse") || p.toString().endsWith(".ndjson"))
          .filter(p -> !p.getFileName().toString().equals("anthropic-docs-error-event.sse"))   // a fragment
          .sorted().toList();
    }
    int whole = 0;
    int pieces = 0;
    int cutsPassed = 0;
    int cutsRun = 0;
    int recordingsAllCuts = 0;
    List<String> failures = new ArrayList<>();
    for (Path file : files) {
      String name = file.getFileName().toString();
      Dialect dialect = dialect(name);
      byte[] bytes = Files.readAllBytes(file);
      List<Event> events = events(bytes, dialect.isNdjson());
      Expected all = read(dialect, events);
      List<String> p = compare(all, run(dialect, bytes));
      whole += p.isEmpty() ? 1 : 0;
      p.forEach(problem -> failures.add(name + " whole: " + problem));
      boolean piecesOk = true;
      for (int seed = 0; seed < 3; seed++) {
        List<String> q = compare(all, run(dialect,
            ScriptedTransport.chunked(new String(bytes, StandardCharsets.UTF_8), new Random(seed))));
        piecesOk &= q.isEmpty();
        int s = seed;
        q.forEach(problem -> failures.add(name + " pieces seed " + s + ": " + problem));
      }
      pieces += piecesOk ? 1 : 0;
      int passedHere = 0;
      for (int k = 0; k < events.size(); k++) {
        Expected prefix = read(dialect, events.subList(0, k + 1));
        byte[] cut = Arrays.copyOf(bytes, events.get(k).end());
        List<String> c = compare(prefix, run(dialect, cut));
        passedHere += c.isEmpty() ? 1 : 0;
        int at = k;
        c.forEach(problem -> failures.add(name + " cut after event " + (at + 1) + "/" + events.size() + ": "
            + problem));
      }
      cutsRun += events.size();
      cutsPassed += passedHere;
      recordingsAllCuts += passedHere == events.size() ? 1 : 0;
      System.out.printf("%-48s %-9s events %4d  whole %s  pieces %s  cuts %d/%d%n", name, dialect, events.size(),
          p.isEmpty() ? "ok" : "FAIL", piecesOk ? "ok" : "FAIL", passedHere, events.size());
    }
    System.out.printf("%d recordings: whole %d pass, pieces %d pass, cut at every boundary %d pass "
        + "(%d of %d cuts)%n", files.size(), whole, pieces, recordingsAllCuts, cutsPassed, cutsRun);
    failures.stream().limit(60).forEach(System.out::println);
    assertThat(failures).isEmpty();
  }
}
