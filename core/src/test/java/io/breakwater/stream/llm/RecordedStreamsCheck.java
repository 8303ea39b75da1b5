package io.breakwater.stream.llm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.StreamTruncatedException;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A local check, run by hand, of the client against the real recorded streams in {@code shared/llm-recordings} (found
 * in an ancestor of the working directory, or at {@code -Dbreakwater.recordings=DIR}); skipped where they are absent.
 * The recordings are third-party data and stay out of the repository; so do their expected values: this check reads
 * both at run time, the expected values from the tables of the recordings' README.
 *
 * <p>Every recording is replayed by a Reactor Netty server on loopback whole, in random 1–7 byte writes (a flush per
 * write), and cut before its terminal event; then the README's derived cases: a drop mid-line, an overloaded error
 * before and after the first token, stalls before the first byte and before the first token, and a Responses resume.
 * Each assembled response (or error) is compared with the README's values.
 *
 * <pre>
 * mvn -B -ntp -pl core test -Dtest=RecordedStreamsCheck -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
@EnabledIf("present")
class RecordedStreamsCheck {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Map<String, Object> REQUEST = Map.of("model", "m", "messages", List.of());
  private static final Pattern SPAN = Pattern.compile("`([^`]*)`");
  private static final List<String> PASSED = new CopyOnWriteArrayList<>();
  private static final List<String> FAILED = new CopyOnWriteArrayList<>();

  static Path dir() {
    String given = System.getProperty("breakwater.recordings");
    if (given != null) {
      return Paths.get(given);
    }
    for (Path p = Paths.get("").toAbsolutePath(); p != null; p = p.getParent()) {
      Path candidate = p.resolve("shared").resolve("llm-recordings");
      if (Files.isDirectory(candidate)) {
        return candidate;
      }
    }
    return Paths.get("/nonexistent");
  }

  static boolean present() {
    return Files.isRegularFile(dir().resolve("README.md"));
  }

  // ---- the README's expected values ----

  /** One recording's row: the cells of its table line. */
  record Row(String file, String source, String text, String calls, String finish, String usage) {
    Dialect dialect() {
      if (file.startsWith("openai-responses")) {
        return Dialect.OPENAI_RESPONSES;
      }
      if (file.startsWith("anthropic")) {
        return Dialect.ANTHROPIC_MESSAGES;
      }
      if (file.startsWith("gemini") || file.startsWith("vertex")) {
        return Dialect.GEMINI;
      }
      if (file.startsWith("ollama")) {
        return Dialect.OLLAMA;
      }
      return Dialect.OPENAI_CHAT;
    }
  }

  static List<Row> rows() throws IOException {
    List<Row> rows = new ArrayList<>();
    for (String line : Files.readAllLines(dir().resolve("README.md"))) {
      if (!line.startsWith("| `")) {
        continue;
      }
      List<String> cells = cells(line);
      String file = spans(cells.get(0)).get(0);
      if (cells.size() >= 6 && (file.endsWith(".sse") || file.endsWith(".ndjson"))) {
        rows.add(new Row(file, cells.get(1), cells.get(2), cells.get(3), cells.get(4), cells.get(5)));
      }
    }
    return rows;
  }

  /** The cells of a table line, split at the pipes that are not escaped. */
  static List<String> cells(String line) {
    List<String> cells = new ArrayList<>();
    StringBuilder cell = new StringBuilder();
    for (int i = 1; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c == '|' && line.charAt(i - 1) != '\\') {
        cells.add(cell.toString().trim());
        cell.setLength(0);
      } else {
        cell.append(c);
      }
    }
    return cells;
  }

  static List<String> spans(String cell) {
    List<String> spans = new ArrayList<>();
    Matcher m = SPAN.matcher(cell);
    while (m.find()) {
      spans.add(m.group(1).replace("\\n", "\n").replace("\\|", "|"));
    }
    return spans;
  }

  /** A text as the README gives it: exact, or a length with a start and an end, or a start. */
  record TextExpectation(String exact, int length, String prefix, String suffix) {
    static TextExpectation exact(String text) {
      return new TextExpectation(text, -1, null, null);
    }

    String check(String actual) {
      if (exact != null && !exact.equals(actual)) {
        return "expected " + quote(exact) + " but was " + quote(actual);
      }
      int characters = actual.codePointCount(0, actual.length());
      if (length >= 0 && characters != length) {
        return "expected " + length + " characters but was " + characters + ": " + quote(actual);
      }
      if (prefix != null && !actual.startsWith(prefix)) {
        return "expected to start with " + quote(prefix) + " but was " + quote(actual);
      }
      if (suffix != null && !actual.endsWith(suffix)) {
        return "expected to end with " + quote(suffix) + " but was " + quote(actual);
      }
      return null;
    }
  }

  static String quote(String s) {
    return "\"" + (s.length() > 120 ? s.substring(0, 120) + "…" : s).replace("\n", "\\n") + "\"";
  }

  static TextExpectation text(String cell) {
    String main = cell;
    for (String cut : List.of(" (reasoning", "; reasoning", " (thinking", " (thought text", " (summaries",
        " (emoji", " (4 text", " (all ", " (a tiny", " (no trailing")) {
      int at = main.indexOf(cut);
      if (at >= 0) {
        main = main.substring(0, at);
      }
    }
    if (main.startsWith("empty")) {
      return TextExpectation.exact("");
    }
    if (main.startsWith("`")) {
      String first = spans(main).get(0);
      return first.endsWith("...") ? new TextExpectation(null, -1, first.substring(0, first.length() - 3), null)
          : TextExpectation.exact(first);
    }
    Matcher choice = Pattern.compile("choice 0: `([^`]*)`").matcher(main);
    if (choice.find()) {
      return TextExpectation.exact(spans(choice.group()).get(0));
    }
    Matcher numbers = Pattern.compile("the numbers `(\\d+)` to `(\\d+)` joined by `([^`]*)`").matcher(main);
    if (numbers.find()) {
      StringBuilder b = new StringBuilder();
      for (int i = Integer.parseInt(numbers.group(1)); i <= Integer.parseInt(numbers.group(2)); i++) {
        b.append(b.length() == 0 ? "" : numbers.group(3).replace("\\n", "\n")).append(i);
      }
      return TextExpectation.exact(b.toString());
    }
    Matcher length = Pattern.compile("(\\d+)[- ](?:chars?|characters?)\\b").matcher(main);
    if (length.find()) {
      return new TextExpectation(null, Integer.parseInt(length.group(1)), startOf(main), endOf(main));
    }
    List<String> spans = spans(main);
    if (main.contains("text blocks:")) {
      return TextExpectation.exact(String.join("", spans));
    }
    String first = spans.get(0);
    if (first.endsWith("...")) {
      return new TextExpectation(null, -1, first.substring(0, first.length() - 3), null);
    }
    return TextExpectation.exact(first);
  }

  static String startOf(String s) {
    Matcher m = Pattern.compile("start(?:s|ing) `([^`]*)`").matcher(s);
    return m.find() ? spans(m.group()).get(0) : null;
  }

  static String endOf(String s) {
    Matcher m = Pattern.compile("ends `([^`]*)`").matcher(s);
    return m.find() ? spans(m.group()).get(0) : null;
  }

  /** The reasoning the README lists in the text cell, or {@code null}. */
  static TextExpectation reasoning(String cell) {
    Matcher exactWithLength = Pattern.compile("(?:reasoning(?:_content)?|thinking|thought text)[ ,]+(\\d+) chars: `")
        .matcher(cell);
    if (exactWithLength.find()) {
      String rest = cell.substring(exactWithLength.end() - 1);
      return new TextExpectation(spans(rest).get(0), Integer.parseInt(exactWithLength.group(1)), null, null);
    }
    Matcher startWithLength = Pattern.compile("(?:reasoning(?:_content)?|thinking|thought text)[ ,]+(\\d+) chars")
        .matcher(cell);
    if (startWithLength.find()) {
      return new TextExpectation(null, Integer.parseInt(startWithLength.group(1)),
          startOf(cell.substring(startWithLength.start())), null);
    }
    Matcher exact = Pattern.compile("\\(reasoning `([^`]*)`").matcher(cell);
    if (exact.find()) {
      return TextExpectation.exact(spans(exact.group()).get(0));
    }
    Matcher summaries = Pattern.compile("summaries: ([\\d, ]+) chars").matcher(cell);
    if (summaries.find()) {
      int total = Arrays.stream(summaries.group(1).split(",")).map(String::trim).filter(s -> !s.isEmpty())
          .mapToInt(Integer::parseInt).sum();
      return new TextExpectation(null, total, null, null);
    }
    return null;
  }

  /** The usage: input, output, total (-1 if not given) and reasoning (-1 if not given); {@code null}: none sent. */
  static long[] usage(String cell) {
    if (cell.startsWith("none")) {
      return null;
    }
    long reasoning = -1;
    Matcher r = Pattern.compile("(?:reasoning|thoughts) (\\d+)").matcher(cell);
    if (r.find()) {
      reasoning = Long.parseLong(r.group(1));
    }
    Matcher split = Pattern.compile("input (\\d+) in [^,]*, (\\d+) in [^;]*; output (\\d+)").matcher(cell);
    if (split.find()) {
      return new long[] {Long.parseLong(split.group(2)), Long.parseLong(split.group(3)), -1, reasoning};
    }
    Matcher named = Pattern.compile("input (\\d+) / output (\\d+)").matcher(cell);
    if (named.find()) {
      return new long[] {Long.parseLong(named.group(1)), Long.parseLong(named.group(2)), -1, reasoning};
    }
    String plain = cell.replaceAll("\\([^)]*\\)", "").replaceAll("`[^`]*`", "");
    Matcher n = Pattern.compile("^\\s*(\\d+)\\s*/\\s*(\\d+)(?:\\s*/\\s*(\\d+))?").matcher(plain);
    if (!n.find()) {
      throw new IllegalStateException("cannot read usage " + cell);
    }
    return new long[] {Long.parseLong(n.group(1)), Long.parseLong(n.group(2)),
        n.group(3) == null ? -1 : Long.parseLong(n.group(3)), reasoning};
  }

  // ---- replay ----

  /** What a server does with one request: the n-th (0-based). */
  interface Script {
    Publisher<Void> answer(int n, String uri, HttpServerResponse res);
  }

  static final class Server implements AutoCloseable {
    final List<String> requests = new CopyOnWriteArrayList<>();
    final AtomicInteger count = new AtomicInteger();
    final DisposableServer server;

    Server(Script script) {
      server = HttpServer.create().host("127.0.0.1").port(0)
          .handle((req, res) -> {
            requests.add(req.method() + " " + req.uri());
            int n = count.getAndIncrement();
            return req.receive().then().thenMany(Flux.defer(() -> Flux.from(script.answer(n, req.uri(), res))));
          })
          .bindNow();
    }

    String baseUrl() {
      return "http://127.0.0.1:" + server.port();
    }

    @Override
    public void close() {
      server.disposeNow();
    }
  }

  static String contentType(Dialect dialect) {
    return dialect == Dialect.OLLAMA ? "application/x-ndjson" : "text/event-stream";
  }

  /** Sends {@code bytes} in writes of the given sizes, a flush after each. */
  static Publisher<Void> write(HttpServerResponse res, Dialect dialect, byte[] bytes, List<Integer> sizes) {
    List<byte[]> writes = new ArrayList<>();
    for (int i = 0, k = 0; i < bytes.length; k++) {
      int n = Math.min(bytes.length - i, sizes.get(k % sizes.size()));
      writes.add(Arrays.copyOfRange(bytes, i, i + n));
      i += n;
    }
    return res.header("Content-Type", contentType(dialect))
        .send(Flux.fromIterable(writes).map(Unpooled::wrappedBuffer), b -> true);
  }

  static Publisher<Void> whole(HttpServerResponse res, Dialect dialect, byte[] bytes) {
    return write(res, dialect, bytes, List.of(Math.max(1, bytes.length)));
  }

  static List<Integer> randomSizes(long seed) {
    Random random = new Random(seed);
    List<Integer> sizes = new ArrayList<>();
    for (int i = 0; i < 4096; i++) {
      sizes.add(1 + random.nextInt(7));
    }
    return sizes;
  }

  static LlmStreamClient client(Server server, Dialect dialect, StreamTimeouts timeouts) {
    LlmStreamClient.Builder b = LlmStreamClient.builder(server.baseUrl(), dialect)
        .retry(RetryPolicy.builder().name("recordings").maxRetries(2)
            .backoff(Backoff.fullJitter(Duration.ofMillis(50), Duration.ofMillis(200)))
            .budget(RetryBudget.unlimited()).build());
    if (timeouts != null) {
      b.timeouts(timeouts);
    }
    if (dialect == Dialect.GEMINI) {
      b.path("/v1beta/models/gemini-x:streamGenerateContent?alt=sse");
    }
    return b.build();
  }

  /** The response, or the error (with the response it carries, if any). */
  record Outcome(LlmResponse response, Throwable error, long millis) {
    LlmResponse responseOrPartial() {
      return response != null ? response : error == null ? null : LlmResponse.partialOf(error).orElse(null);
    }
  }

  static Outcome run(LlmStreamClient client) {
    long t0 = System.nanoTime();
    return client.stream(REQUEST).as(LlmResponse::aggregate)
        .map(r -> new Outcome(r, null, 0))
        .onErrorResume(e -> Mono.just(new Outcome(null, e, 0)))
        .map(o -> new Outcome(o.response(), o.error(), (System.nanoTime() - t0) / 1_000_000))
        .block(Duration.ofSeconds(60));
  }

  static void record(String name, List<String> problems) {
    if (problems.isEmpty()) {
      PASSED.add(name);
    } else {
      FAILED.add(name + ": " + String.join("; ", problems));
    }
  }

  /** The response's fields against the row. */
  static List<String> compare(Row row, LlmResponse r, boolean partial) {
    List<String> problems = new ArrayList<>();
    if (r == null) {
      problems.add("no response");
      return problems;
    }
    TextExpectation text = text(row.text());
    String t = r.text();
    if (partial) {
      String whole = text.exact() != null ? text.exact() : text.prefix();
      if (whole != null && !whole.startsWith(t) && !t.startsWith(whole)) {
        problems.add("partial text " + quote(t) + " is not a prefix of " + quote(whole));
      }
      return problems;
    }
    String textProblem = text.check(t);
    if (textProblem != null) {
      problems.add("text: " + textProblem);
    }
    TextExpectation reasoning = reasoning(row.text());
    if (reasoning != null && reasoning.check(r.reasoning()) != null) {
      problems.add("reasoning: " + reasoning.check(r.reasoning()));
    }
    if (row.text().contains("refusal") && row.text().contains("join to")) {
      String refusal = spans(row.text().substring(row.text().indexOf("join to"))).get(0);
      if (!refusal.equals(r.refusal())) {
        problems.add("refusal " + quote(r.refusal()) + " instead of " + quote(refusal));
      }
    }
    problems.addAll(calls(row, r.toolCalls()));
    Matcher citations = Pattern.compile("(\\d+) `citations_delta`").matcher(row.source());
    if (citations.find()) {
      int count = r.choices().stream().mapToInt(c -> c.citations().size()).sum();
      if (count != Integer.parseInt(citations.group(1))) {
        problems.add(count + " citations instead of " + citations.group(1));
      }
    }
    List<String> finish = spans(row.finish());
    if (!finish.isEmpty() && !row.finish().startsWith("none")) {
      for (LlmChoice c : r.choices()) {
        if (!c.rawFinishReason().equals(finish.get(0))) {
          problems.add("finish of choice " + c.index() + " " + c.rawFinishReason() + " instead of " + finish.get(0));
        }
      }
    }
    long[] usage = usage(row.usage());
    if (usage == null) {
      if (r.usage() != null) {
        problems.add("usage " + r.usage() + " where none was sent");
      }
    } else if (r.usage() == null) {
      problems.add("no usage");
    } else {
      TokenUsage u = r.usage();
      if (u.inputTokens() != usage[0] || u.outputTokens() != usage[1] || usage[2] >= 0 && u.totalTokens() != usage[2]
          || usage[3] >= 0 && u.reasoningTokens() != usage[3]) {
        problems.add("usage " + u + " instead of " + Arrays.toString(usage));
      }
    }
    return problems;
  }

  static List<String> calls(Row row, List<ToolCall> calls) {
    List<String> problems = new ArrayList<>();
    if (row.calls().startsWith("none") || row.calls().isEmpty()) {
      if (!calls.isEmpty()) {
        problems.add("tool calls " + calls + " where none were expected");
      }
      return problems;
    }
    List<String> spans = spans(row.calls());
    int group = row.dialect() == Dialect.GEMINI ? 2 : 3;
    if (calls.size() != spans.size() / group) {
      problems.add(calls.size() + " tool calls instead of " + spans.size() / group);
      return problems;
    }
    for (int i = 0; i < calls.size(); i++) {
      ToolCall call = calls.get(i);
      int at = i * group;
      if (group == 3 && !call.id().equals(spans.get(at))) {
        problems.add("call id " + call.id() + " instead of " + spans.get(at));
      }
      if (!call.name().equals(spans.get(at + group - 2))) {
        problems.add("call name " + call.name() + " instead of " + spans.get(at + group - 2));
      }
      try {
        JsonNode expected = JSON.readTree(spans.get(at + group - 1));
        if (!expected.equals(call.arguments())) {
          problems.add("arguments " + call.argumentsJson() + " instead of " + expected);
        }
      } catch (IOException e) {
        problems.add("unreadable expected arguments " + spans.get(at + group - 1));
      }
    }
    return problems;
  }

  /** The error the row expects instead of a completed response, checked; an empty list when none is expected. */
  static List<String> expectedEnd(Row row, Outcome o) {
    List<String> problems = new ArrayList<>();
    boolean incomplete = row.finish().contains("length") || row.finish().contains("pause_turn");
    boolean inBandError = row.finish().contains("error");
    boolean unterminated = row.file().equals("anthropic-sdk-tool-use-fixture.sse");
    if (inBandError) {
      if (!(o.error() instanceof LlmStreamException e)) {
        problems.add("expected the server's error, got " + o.error());
      } else {
        List<String> spans = spans(row.finish());
        String code = spans.get(spans.size() - 1);
        if (!e.errorCode().equals(code) && !e.getMessage().contains(code)) {
          problems.add("error " + e.getMessage() + " does not name " + code);
        }
      }
    } else if (unterminated) {
      if (!(o.error() instanceof StreamTruncatedException t) || t.getCause() != null) {
        problems.add("expected a truncation without cause, got " + o.error());
      }
    } else if (incomplete) {
      if (!(o.error() instanceof LlmIncompleteException)) {
        problems.add("expected LlmIncompleteException, got " + o.error());
      }
    } else if (o.error() != null) {
      problems.add("failed with " + o.error());
    }
    return problems;
  }

  @Test
  void everyRecordingWholeChunkedAndCut() throws IOException {
    for (Row row : rows()) {
      if (row.file().equals("anthropic-docs-error-event.sse")
          || row.file().equals("openai-responses-background-resume-after-0.sse")) {
        continue;
      }
      byte[] bytes = Files.readAllBytes(dir().resolve(row.file()));
      Dialect dialect = row.dialect();
      for (String mode : List.of("whole", "chunked")) {
        List<Integer> sizes = mode.equals("whole") ? List.of(Math.max(1, bytes.length))
            : randomSizes(row.file().hashCode());
        try (Server server = new Server((n, uri, res) -> uri.contains("starting_after")
            ? notFound(res) : write(res, dialect, bytes, sizes))) {
          Outcome o = run(client(server, dialect, null));
          List<String> problems = expectedEnd(row, o);
          problems.addAll(compare(row, o.responseOrPartial(), false));
          record(row.file() + " " + mode, problems);
        }
      }
      cut(row, bytes);
    }
  }

  static Publisher<Void> notFound(HttpServerResponse res) {
    return res.status(404).header("Content-Type", "application/json")
        .sendString(Mono.just("{\"error\":{\"message\":\"No response found\",\"type\":\"invalid_request_error\","
            + "\"param\":null,\"code\":null}}"));
  }

  /** Where the terminal event starts: {@code [DONE]}, {@code message_stop}, {@code response.completed}. */
  static int terminalAt(Row row, String body) {
    return switch (row.dialect()) {
      case OPENAI_CHAT -> body.indexOf("data: [DONE]");
      case ANTHROPIC_MESSAGES -> body.indexOf("event: message_stop");
      case OPENAI_RESPONSES -> body.indexOf("event: response.completed");
      case GEMINI -> body.lastIndexOf("data:");                   // no terminal event: the finishing chunk
      case OLLAMA -> body.lastIndexOf('\n', body.length() - 2) + 1;   // the done line
    };
  }

  static void cut(Row row, byte[] bytes) {
    String body = new String(bytes, StandardCharsets.ISO_8859_1);
    int at = terminalAt(row, body);
    if (at < 0) {
      return;   // ends with an error, not a terminal event
    }
    byte[] cut = Arrays.copyOf(bytes, at);
    Dialect dialect = row.dialect();
    try (Server server = new Server((n, uri, res) -> uri.contains("starting_after")
        ? notFound(res) : whole(res, dialect, cut))) {
      Outcome o = run(client(server, dialect, null));
      List<String> problems = new ArrayList<>();
      if (row.finish().contains("error")) {
        if (!(o.error() instanceof LlmStreamException)) {
          problems.add("expected the server's error, got " + o.error());
        }
      } else if (o.response() != null) {
        problems.add("completed without its terminal event");
      } else if (o.error() instanceof StreamTruncatedException t) {
        if (t.getCause() != null && !dialect.equals(Dialect.OPENAI_RESPONSES)) {
          problems.add("truncation with cause " + t.getCause());
        }
        problems.addAll(compare(row, o.responseOrPartial(), true));
      } else if (LlmResponse.partialOf(o.error()).map(r -> !r.text().isEmpty()).orElse(false)) {
        problems.add("content delivered, but no truncation: " + o.error());
      }
      record(row.file() + " cut", problems);
    }
  }

  static Row row(String file) throws IOException {
    return rows().stream().filter(r -> r.file().equals(file)).findFirst().orElseThrow();
  }

  static byte[] read(String file) throws IOException {
    return Files.readAllBytes(dir().resolve(file));
  }

  /** The byte offsets where each event (its first line) starts. */
  static List<Integer> eventStarts(String body) {
    List<Integer> starts = new ArrayList<>();
    boolean atStart = true;
    for (int i = 0; i < body.length(); i++) {
      if (atStart && body.charAt(i) != '\n' && body.charAt(i) != '\r') {
        starts.add(i);
        atStart = false;
      }
      if (body.startsWith("\n\n", i) || body.startsWith("\r\n\r\n", i)) {
        atStart = true;
      }
    }
    return starts;
  }

  /** The start of the n-th (1-based) event whose text contains {@code marker}. */
  static int nthEvent(String body, String marker, int n) {
    List<Integer> starts = eventStarts(body);
    int seen = 0;
    for (int i = 0; i < starts.size(); i++) {
      int end = i + 1 < starts.size() ? starts.get(i + 1) : body.length();
      if (body.substring(starts.get(i), end).contains(marker) && ++seen == n) {
        return starts.get(i);
      }
    }
    throw new IllegalStateException("no event " + n + " with " + marker);
  }

  static int endOfEvent(String body, int start) {
    int end = body.indexOf("\n\n", start);
    return end + 2;
  }

  @Test
  void droppedMidLine() throws IOException {
    byte[] bytes = read("openai-chat-text-usage.sse");
    String body = new String(bytes, StandardCharsets.ISO_8859_1);
    int tenth = nthEvent(body, "\"content\":\"", 11);   // the role delta has "content":"" too
    int middle = (tenth + endOfEvent(body, tenth)) / 2;
    byte[] cut = Arrays.copyOf(bytes, middle);
    String expected = spans(derived("Dropped mid-line")).get(spans(derived("Dropped mid-line")).size() - 1);
    try (Server server = new Server((n, uri, res) -> Flux.from(write(res, Dialect.OPENAI_CHAT, cut, List.of(cut.length)))
        .thenMany(Mono.delay(Duration.ofMillis(50)))
        .then(Mono.fromRunnable(() -> res.withConnection(c -> c.channel().close()))))) {
      Outcome o = run(client(server, Dialect.OPENAI_CHAT, null));
      List<String> problems = new ArrayList<>();
      if (!(o.error() instanceof StreamTruncatedException)) {
        problems.add("expected a truncation, got " + o.error());
      } else if (!expected.equals(LlmResponse.partialOf(o.error()).orElseThrow().text())) {
        problems.add("partial " + quote(LlmResponse.partialOf(o.error()).orElseThrow().text()) + " instead of "
            + quote(expected));
      }
      record("derived: dropped mid-line", problems);
    }
  }

  /** The README's paragraph of a derived case, its wrapped lines joined. */
  static String derived(String title) throws IOException {
    List<String> lines = Files.readAllLines(dir().resolve("README.md"));
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("- **" + title)) {
        StringBuilder paragraph = new StringBuilder(lines.get(i));
        for (int j = i + 1; j < lines.size() && lines.get(j).startsWith("  "); j++) {
          paragraph.append(' ').append(lines.get(j).trim());
        }
        return paragraph.toString();
      }
    }
    throw new IllegalStateException("no derived case " + title);
  }

  @Test
  void overloadedErrorAfterAndBeforeTheFirstToken() throws IOException {
    String body = new String(read("anthropic-text-ping.sse"), StandardCharsets.UTF_8);
    String error = new String(read("anthropic-docs-error-event.sse"), StandardCharsets.UTF_8);
    error = error.endsWith("\n") ? error + "\n" : error + "\n\n";
    int second = nthEvent(body, "text_delta", 2);
    String after = body.substring(0, endOfEvent(body, second)) + error;
    String before = body.substring(0, nthEvent(body, "text_delta", 1)) + error;
    List<String> firstTwo = new ArrayList<>();
    for (int i = 1; i <= 2; i++) {
      int at = nthEvent(body, "text_delta", i);
      String event = body.substring(at, endOfEvent(body, at));
      firstTwo.add(JSON.readTree(event.substring(event.indexOf("data:") + 5)).path("delta").path("text").asText());
    }
    for (String which : List.of("after", "before")) {
      byte[] bytes = (which.equals("after") ? after : before).getBytes(StandardCharsets.UTF_8);
      try (Server server = new Server((n, uri, res) -> whole(res, Dialect.ANTHROPIC_MESSAGES, bytes))) {
        Outcome o = run(client(server, Dialect.ANTHROPIC_MESSAGES, null));
        List<String> problems = new ArrayList<>();
        if (!(o.error() instanceof LlmStreamException e) || !e.errorType().equals("overloaded_error")) {
          problems.add("expected overloaded_error as LlmStreamException, got " + o.error());
        } else {
          String expected = which.equals("after") ? String.join("", firstTwo) : "";
          if (!e.partialResponse().text().equals(expected)) {
            problems.add("partial " + quote(e.partialResponse().text()) + " instead of " + quote(expected));
          }
          int requests = which.equals("after") ? 1 : 3;
          if (server.count.get() != requests) {
            problems.add(server.count.get() + " requests instead of " + requests);
          }
        }
        record("derived: overloaded error " + which + " the first token", problems);
      }
    }
  }

  @Test
  void stalls() throws IOException {
    StreamTimeouts fourAndOne = StreamTimeouts.builder().firstItem(Duration.ofSeconds(4))
        .idle(Duration.ofSeconds(1)).build();
    Map<String, String> firstToken = Map.of(
        "openai-chat-text-usage.sse", "\"content\":\"I",
        "anthropic-text-ping.sse", "text_delta",
        "openai-responses-text.sse", "response.output_text.delta");
    for (Map.Entry<String, String> e : firstToken.entrySet()) {
      Row row = row(e.getKey());
      byte[] bytes = read(e.getKey());
      String body = new String(bytes, StandardCharsets.ISO_8859_1);
      int at = nthEvent(body, e.getValue(), 1);
      byte[] head = Arrays.copyOf(bytes, at);
      byte[] tail = Arrays.copyOfRange(bytes, at, bytes.length);
      for (Duration stall : List.of(Duration.ofSeconds(6), Duration.ofSeconds(2))) {
        try (Server server = new Server((n, uri, res) -> Flux.from(whole(res, row.dialect(), head))
            .thenMany(Mono.delay(stall)).thenMany(whole(res, row.dialect(), tail)))) {
          Outcome o = run(client(server, row.dialect(), fourAndOne));
          List<String> problems = new ArrayList<>();
          if (stall.getSeconds() == 6) {
            if (!(o.error() instanceof FirstItemTimeoutException)) {
              problems.add("expected the first-token timeout, got " + o.error());
            }
          } else {
            problems.addAll(expectedEnd(row, o));
            problems.addAll(compare(row, o.responseOrPartial(), false));
          }
          if (server.count.get() != 1) {
            problems.add(server.count.get() + " requests");
          }
          record("derived: " + e.getKey() + " stall " + stall.getSeconds() + " s before the first token", problems);
        }
      }
      try (Server server = new Server((n, uri, res) -> Mono.delay(Duration.ofSeconds(6))
          .thenMany(whole(res, row.dialect(), bytes)))) {
        Outcome o = run(client(server, row.dialect(), fourAndOne));
        List<String> problems = new ArrayList<>();
        if (!(o.error() instanceof FirstItemTimeoutException)) {
          problems.add("expected the first-token timeout, got " + o.error());
        }
        if (o.millis() > 5500) {
          problems.add("took " + o.millis() + " ms");
        }
        record("derived: " + e.getKey() + " stall 6 s before the first byte", problems);
      }
    }
  }

  @Test
  void responsesResume() throws IOException {
    byte[] bytes = read("openai-responses-background.sse");
    byte[] resume = read("openai-responses-background-resume-after-0.sse");
    String body = new String(bytes, StandardCharsets.ISO_8859_1);
    int third = nthEvent(body, "response.output_text.delta", 3);
    byte[] cut = Arrays.copyOf(bytes, endOfEvent(body, third));
    String id = JSON.readTree(body.substring(body.indexOf("data:") + 5, body.indexOf('\n', body.indexOf("data:"))))
        .path("response").path("id").asText();
    try (Server server = new Server((n, uri, res) -> n == 0
        ? Flux.from(whole(res, Dialect.OPENAI_RESPONSES, cut)).thenMany(Mono.delay(Duration.ofMillis(50)))
            .then(Mono.fromRunnable(() -> res.withConnection(c -> c.channel().close())))
        : uri.contains(id) && uri.contains("starting_after=7") ? whole(res, Dialect.OPENAI_RESPONSES, resume)
        : notFound(res))) {
      List<LlmDelta> deltas = new CopyOnWriteArrayList<>();
      LlmResponse r = client(server, Dialect.OPENAI_RESPONSES, null).stream(REQUEST).doOnNext(deltas::add)
          .as(LlmResponse::aggregate).onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(30));
      List<String> problems = new ArrayList<>();
      String expected = text(row("openai-responses-background.sse").text()).exact();
      if (r == null || !r.text().equals(expected)) {
        problems.add("text " + (r == null ? "none" : quote(r.text())) + " instead of " + quote(expected));
      }
      long texts = deltas.stream().filter(LlmDelta.Text.class::isInstance).count();
      long expectedTexts = body.split("response.output_text.delta", -1).length - 1;
      if (texts * 2 != expectedTexts) {   // each delta event names its type twice (event: and "type")
        problems.add(texts + " text deltas instead of " + expectedTexts / 2);
      }
      if (!server.requests.equals(List.of("POST /v1/responses", "GET /v1/responses/" + id
          + "?stream=true&starting_after=7"))) {
        problems.add("requests " + server.requests);
      }
      record("derived: Responses resume after seq 7", problems);
    }
  }

  @AfterAll
  static void report() {
    System.out.println("Recorded streams: " + PASSED.size() + "/" + (PASSED.size() + FAILED.size()) + " cases");
    FAILED.forEach(f -> System.out.println("  FAILED " + f));
    assertThat(FAILED).isEmpty();
  }
}
