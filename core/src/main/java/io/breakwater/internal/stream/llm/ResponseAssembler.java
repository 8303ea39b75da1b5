package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.internal.Utf8;
import io.breakwater.stream.llm.Citation;
import io.breakwater.stream.llm.FinishReason;
import io.breakwater.stream.llm.LlmChoice;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmResponse;
import io.breakwater.stream.llm.TokenUsage;
import io.breakwater.stream.llm.ToolCall;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Assembles {@link LlmDelta}s into an {@link LlmResponse}, and counts what it keeps (so a client can bound it): the
 * UTF-8 bytes of the output, and the entries that hold it (choices, tool calls, citations, signatures, redacted
 * blocks, unmodelled outputs), which cost memory even when they carry no text. Not thread-safe: deltas of one stream
 * arrive one at a time.
 */
public final class ResponseAssembler {

  private static final ObjectMapper DEFAULT_MAPPER = new ObjectMapper();
  /** What one entry is taken to cost (a few hundred bytes of objects): a bound of n bytes admits n / 256 entries. */
  static final int ENTRY_BYTES = 256;
  /** The entries any bound admits, so a small bound still holds a few choices and tool calls. */
  static final int MIN_ENTRIES = 64;

  private final ObjectMapper mapper;
  private final TreeMap<Integer, ChoiceBuilder> choices = new TreeMap<>();
  private String id = "";
  private String model = "";
  private @Nullable TokenUsage usage;
  private int attempts;
  private boolean completed;
  private long outputBytes;
  private long entries;

  public ResponseAssembler() {
    this(DEFAULT_MAPPER);
  }

  public ResponseAssembler(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** Adds one delta. */
  public void accept(LlmDelta delta) {
    if (delta instanceof LlmDelta.Text t) {
      choice(t.choice()).text().append(t.text());
      outputBytes += Utf8.length(t.text());
    } else if (delta instanceof LlmDelta.ToolCallArguments a) {
      call(a.choice(), a.index()).arguments.append(a.fragment());
      outputBytes += Utf8.length(a.fragment());
    } else if (delta instanceof LlmDelta.Reasoning r) {
      choice(r.choice()).reasoning().append(r.text());
      outputBytes += Utf8.length(r.text());
    } else if (delta instanceof LlmDelta.Refusal r) {
      choice(r.choice()).refusal().append(r.text());
      outputBytes += Utf8.length(r.text());
    } else if (delta instanceof LlmDelta.ToolCallStart s) {
      call(s.choice(), s.index()).start(s);
      outputBytes += Utf8.length(s.id()) + Utf8.length(s.name());
    } else if (delta instanceof LlmDelta.ReasoningSignature s) {
      choice(s.choice()).signatures().add(s.signature());
      entries++;
      outputBytes += Utf8.length(s.signature());
    } else if (delta instanceof LlmDelta.RedactedReasoning r) {
      choice(r.choice()).redacted().add(r.data());
      entries++;
      outputBytes += Utf8.length(r.data());
    } else if (delta instanceof LlmDelta.CitationAdded c) {
      choice(c.choice()).citations().add(c.citation());
      entries++;
      outputBytes += Utf8.length(c.citation().url()) + Utf8.length(c.citation().title())
          + Utf8.length(c.citation().citedText()) + Utf8.length(c.citation().raw().toString());
    } else if (delta instanceof LlmDelta.Output o) {
      choice(o.choice()).other().add(o);
      entries++;
      outputBytes += Utf8.length(o.json().toString());
    } else if (delta instanceof LlmDelta.Finish f) {
      ChoiceBuilder c = choice(f.choice());
      c.finish = f.reason();
      c.rawFinish = f.raw();
    } else if (delta instanceof LlmDelta.Usage u) {
      usage = u.usage();
    } else if (delta instanceof LlmDelta.Metadata m) {
      id = m.responseId();
      model = m.model();
    } else if (delta instanceof LlmDelta.Done d) {
      attempts = d.attempts();
      completed = true;
    }
    // LlmDelta.Event: raw events are for the caller, not part of the response
  }

  /**
   * The UTF-8 bytes of the output kept so far (text, refusal, reasoning, signatures, tool calls, citations with
   * their raw JSON, unmodelled output).
   */
  public long outputBytes() {
    return outputBytes;
  }

  /** The entries kept so far: choices, tool calls, citations, signatures, redacted blocks, unmodelled outputs. */
  public long entries() {
    return entries;
  }

  /**
   * Whether what is kept passes a bound of {@code maxBytes}: more output bytes than that, or more entries than
   * {@code maxBytes / 256} (at least 64), so that the memory kept stays within a small multiple of the bound.
   */
  public boolean exceeds(long maxBytes) {
    return outputBytes > maxBytes || entries > Math.max(MIN_ENTRIES, maxBytes / ENTRY_BYTES);
  }

  /** Whether no choice holds anything yet. */
  public boolean isEmpty() {
    return choices.isEmpty();
  }

  /** Marks the response complete after {@code attempts} attempts (what a {@link LlmDelta.Done} does). */
  public void completed(int attempts) {
    this.attempts = attempts;
    this.completed = true;
  }

  /** Records the attempts made so far, for a partial response. */
  public void attempts(int attempts) {
    this.attempts = attempts;
  }

  /** The response assembled so far. */
  public LlmResponse build() {
    List<LlmChoice> built = new ArrayList<>(Math.max(1, choices.size()));
    for (ChoiceBuilder c : choices.values()) {
      built.add(c.build(mapper));
    }
    if (built.isEmpty()) {
      built.add(LlmChoice.empty(0));
    }
    return new LlmResponse(id, model, built, usage, attempts, completed);
  }

  /** Whether the assembled response ended incomplete (a choice finished with a length, filter or pause reason). */
  public boolean isIncomplete() {
    for (ChoiceBuilder c : choices.values()) {
      if (c.finish.isIncomplete()) {
        return true;
      }
    }
    return false;
  }

  private ChoiceBuilder choice(int index) {
    ChoiceBuilder c = choices.get(index);
    if (c == null) {
      c = new ChoiceBuilder(index);
      choices.put(index, c);
      entries++;
    }
    return c;
  }

  private CallBuilder call(int choice, int index) {
    Map<Integer, CallBuilder> calls = choice(choice).calls();
    CallBuilder call = calls.get(index);
    if (call == null) {
      call = new CallBuilder(index);
      calls.put(index, call);
      entries++;
    }
    return call;
  }

  private static final class ChoiceBuilder {
    final int index;
    @Nullable StringBuilder text;
    @Nullable StringBuilder refusal;
    @Nullable StringBuilder reasoning;
    @Nullable List<String> signatures;
    @Nullable List<String> redacted;
    @Nullable Map<Integer, CallBuilder> calls;
    @Nullable List<Citation> citations;
    @Nullable List<LlmDelta.Output> other;
    FinishReason finish = FinishReason.NONE;
    String rawFinish = "";

    ChoiceBuilder(int index) {
      this.index = index;
    }

    StringBuilder text() {
      return text == null ? text = new StringBuilder(64) : text;
    }

    StringBuilder refusal() {
      return refusal == null ? refusal = new StringBuilder() : refusal;
    }

    StringBuilder reasoning() {
      return reasoning == null ? reasoning = new StringBuilder() : reasoning;
    }

    List<String> signatures() {
      return signatures == null ? signatures = new ArrayList<>(2) : signatures;
    }

    List<String> redacted() {
      return redacted == null ? redacted = new ArrayList<>(2) : redacted;
    }

    Map<Integer, CallBuilder> calls() {
      return calls == null ? calls = new LinkedHashMap<>(4) : calls;
    }

    List<Citation> citations() {
      return citations == null ? citations = new ArrayList<>(4) : citations;
    }

    List<LlmDelta.Output> other() {
      return other == null ? other = new ArrayList<>(2) : other;
    }

    LlmChoice build(ObjectMapper mapper) {
      List<ToolCall> client = new ArrayList<>();
      List<ToolCall> server = new ArrayList<>();
      if (calls != null) {
        for (CallBuilder call : calls.values()) {
          ToolCall built = call.build(mapper);
          (built.serverSide() ? server : client).add(built);
        }
      }
      return new LlmChoice(index, string(text), string(refusal), string(reasoning), list(signatures),
          list(redacted), client, server, list(citations), list(other), finish, rawFinish);
    }

    private static String string(@Nullable StringBuilder b) {
      return b == null ? "" : b.toString();
    }

    private static <T> List<T> list(@Nullable List<T> l) {
      return l == null ? List.of() : l;
    }
  }

  private static final class CallBuilder {
    final int index;
    String id = "";
    String name = "";
    boolean serverSide;
    final StringBuilder arguments = new StringBuilder();

    CallBuilder(int index) {
      this.index = index;
    }

    /** The start names the call; a start after argument fragments (an out-of-order server) still does. */
    void start(LlmDelta.ToolCallStart start) {
      if (id.isEmpty()) {
        id = start.id();
      }
      if (name.isEmpty()) {
        name = start.name();
      }
      serverSide |= start.serverSide();
    }

    ToolCall build(ObjectMapper mapper) {
      String json = arguments.toString();
      JsonNode parsed;
      try {
        parsed = json.isBlank() ? mapper.createObjectNode() : mapper.readTree(json);
      } catch (IOException notJson) {
        parsed = null;
      }
      return new ToolCall(index, id, name, parsed, json.isBlank() ? "{}" : json, serverSide);
    }
  }
}
