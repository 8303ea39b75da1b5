package io.breakwater.stream.llm;

/**
 * Streams written for these tests in the format of each dialect (none is copied from a provider or an SDK): the
 * cases real streams exhibit — framing before the first token, role-only deltas, {@code n > 1}, refusals, tool-call
 * arguments in fragments and whole, server tool use, thinking with signatures, redacted thinking, citations,
 * {@code pause_turn}, CRLF, comment lines, {@code event: error} with HTTP 200, in-band error objects, usage chunks with
 * {@code choices: []} and usage inside the finish chunk, reasoning fields of compatible servers, NDJSON.
 */
final class LlmFixtures {

  private LlmFixtures() {}

  /** A stream, and where its terminal event starts (a cut there drops the terminal event and what follows). */
  record Fixture(String name, Dialect dialect, String body, String terminal) {
    String cutBeforeTerminal() {
      int at = body.lastIndexOf(terminal);
      if (at < 0) {
        throw new IllegalStateException(name + " has no " + terminal);
      }
      return body.substring(0, at);
    }

    @Override
    public String toString() {
      return name;
    }
  }

  // ---- OpenAI chat completions ----

  static String chat(String choices) {
    return "data: {\"id\":\"chatcmpl-bw7\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
        + "\"model\":\"gpt-bw\",\"choices\":[" + choices + "]}\n\n";
  }

  static String delta(int index, String delta) {
    return "{\"index\":" + index + ",\"delta\":" + delta + ",\"logprobs\":null,\"finish_reason\":null}";
  }

  static String finish(int index, String reason) {
    return "{\"index\":" + index + ",\"delta\":{},\"logprobs\":null,\"finish_reason\":\"" + reason + "\"}";
  }

  static String text(String text) {
    return chat(delta(0, "{\"content\":\"" + text + "\"}"));
  }

  static final String CHAT_ROLE = chat(delta(0, "{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}"));
  static final String CHAT_DONE = "data: [DONE]\n\n";

  static String chatUsage(int prompt, int completion, int cached, int reasoning) {
    return "data: {\"id\":\"chatcmpl-bw7\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
        + "\"model\":\"gpt-bw\",\"choices\":[],\"usage\":{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":"
        + completion + ",\"total_tokens\":" + (prompt + completion) + ",\"prompt_tokens_details\":{\"cached_tokens\":"
        + cached + "},\"completion_tokens_details\":{\"reasoning_tokens\":" + reasoning + "}}}\n\n";
  }

  static final Fixture CHAT_TEXT = new Fixture("openai chat: text, comment, usage chunk with choices: []",
      Dialect.OPENAI_CHAT,
      ": keep-alive\n\n" + CHAT_ROLE + text("Lyon") + text(" is lovely") + text(" in spring.")
          + chat(finish(0, "stop")) + chatUsage(21, 5, 8, 0) + CHAT_DONE,
      CHAT_DONE);

  static final Fixture CHAT_CRLF = new Fixture("openai chat: CRLF line endings", Dialect.OPENAI_CHAT,
      CHAT_TEXT.body().replace("\n", "\r\n"), "data: [DONE]");

  static final Fixture CHAT_TOOLS = new Fixture("openai chat: two tool calls in fragments", Dialect.OPENAI_CHAT,
      chat(delta(0, "{\"role\":\"assistant\",\"content\":null}"))
          + chat(delta(0, "{\"tool_calls\":[{\"index\":0,\"id\":\"call_bwA\",\"type\":\"function\","
              + "\"function\":{\"name\":\"find_trains\",\"arguments\":\"\"}}]}"))
          + chat(delta(0, "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"from\\\": \\\"Par\"}}]}"))
          + chat(delta(0, "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"is\\\", \\\"to\\\": "
              + "\\\"Lyon\\\"}\"}}]}"))
          + chat(delta(0, "{\"tool_calls\":[{\"index\":1,\"id\":\"call_bwB\",\"type\":\"function\","
              + "\"function\":{\"name\":\"weather\",\"arguments\":\"\"}}]}"))
          + chat(delta(0, "{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"{\\\"city\\\":\\\"Lyon\\\"}\"}}]}"))
          + chat(finish(0, "tool_calls")) + chatUsage(80, 40, 0, 0) + CHAT_DONE,
      CHAT_DONE);

  static final Fixture CHAT_REFUSAL = new Fixture("openai chat: refusal", Dialect.OPENAI_CHAT,
      CHAT_ROLE + chat(delta(0, "{\"refusal\":\"I can't\"}")) + chat(delta(0, "{\"refusal\":\" help with that.\"}"))
          + chat(finish(0, "stop")) + chatUsage(30, 6, 0, 0) + CHAT_DONE,
      CHAT_DONE);

  static final Fixture CHAT_N2 = new Fixture("openai chat: n = 2, choices interleaved", Dialect.OPENAI_CHAT,
      chat(delta(0, "{\"role\":\"assistant\",\"content\":\"\"}")) + chat(delta(1, "{\"role\":\"assistant\",\"content\":\"\"}"))
          + chat(delta(0, "{\"content\":\"Oui\"}")) + chat(delta(1, "{\"content\":\"Non\"}"))
          + chat(delta(0, "{\"content\":\", volontiers\"}")) + chat(delta(1, "{\"content\":\", merci\"}"))
          + chat(finish(1, "stop")) + chat(finish(0, "stop")) + chatUsage(12, 8, 0, 0) + CHAT_DONE,
      CHAT_DONE);

  static final Fixture CHAT_LENGTH = new Fixture("openai chat: finish length", Dialect.OPENAI_CHAT,
      CHAT_ROLE + text("{\\\"") + chat(finish(0, "length")) + chatUsage(50, 1, 0, 0) + CHAT_DONE, CHAT_DONE);

  /** Mistral and DeepSeek put the usage into the finish chunk, without a usage chunk. */
  static final Fixture CHAT_USAGE_IN_FINISH = new Fixture("compatible: usage inside the finish chunk",
      Dialect.OPENAI_CHAT,
      "data: {\"id\":\"bw9f\",\"object\":\"chat.completion.chunk\",\"model\":\"small-bw\",\"choices\":["
          + delta(0, "{\"role\":\"assistant\",\"content\":\"\"}") + "]}\n\n"
          + "data: {\"id\":\"bw9f\",\"object\":\"chat.completion.chunk\",\"model\":\"small-bw\",\"choices\":["
          + delta(0, "{\"content\":\"Bonjour !\"}") + "]}\n\n"
          + "data: {\"id\":\"bw9f\",\"object\":\"chat.completion.chunk\",\"model\":\"small-bw\",\"choices\":["
          + "{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":7,"
          + "\"total_tokens\":10,\"completion_tokens\":3}}\n\n"
          + CHAT_DONE,
      CHAT_DONE);

  static final Fixture DEEPSEEK_REASONING = new Fixture("compatible: DeepSeek reasoning_content",
      Dialect.OPENAI_CHAT,
      chat(delta(0, "{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"\"}"))
          + chat(delta(0, "{\"content\":null,\"reasoning_content\":\"The user greets\"}"))
          + chat(delta(0, "{\"content\":null,\"reasoning_content\":\"; greet back.\"}"))
          + chat(delta(0, "{\"content\":\"Hi! \uD83D\uDC4B\",\"reasoning_content\":null}"))
          + chat(finish(0, "stop"))
          + "data: {\"id\":\"chatcmpl-bw7\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-bw\",\"choices\":[],"
          + "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":20,\"total_tokens\":25,\"prompt_cache_hit_tokens\":2,"
          + "\"prompt_cache_miss_tokens\":3,\"completion_tokens_details\":{\"reasoning_tokens\":15}}}\n\n"
          + CHAT_DONE,
      CHAT_DONE);

  /** Groq: reasoning in {@code delta.reasoning}, a whole tool call in one delta, usage in {@code x_groq} too. */
  static final Fixture GROQ_TOOL_REASONING = new Fixture("compatible: Groq reasoning and a whole tool call",
      Dialect.OPENAI_CHAT,
      chat(delta(0, "{\"role\":\"assistant\",\"content\":null}"))
          + chat(delta(0, "{\"reasoning\":\"Need the tool.\",\"channel\":\"analysis\"}"))
          + chat(delta(0, "{\"tool_calls\":[{\"id\":\"fc_bw1\",\"type\":\"function\",\"function\":{\"name\":"
              + "\"lookup\",\"arguments\":\"{\\\"q\\\":\\\"Lyon\\\"}\"},\"index\":0}]}"))
          + "data: {\"id\":\"chatcmpl-bw7\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-bw\",\"choices\":["
          + finish(0, "tool_calls") + "],\"x_groq\":{\"id\":\"req_bw\",\"usage\":{\"queue_time\":0.01,"
          + "\"prompt_tokens\":100,\"completion_tokens\":12,\"total_tokens\":112,\"completion_tokens_details\":"
          + "{\"reasoning_tokens\":4}}},\"usage\":{\"queue_time\":0.01,\"prompt_tokens\":100,\"completion_tokens\":12,"
          + "\"total_tokens\":112,\"completion_tokens_details\":{\"reasoning_tokens\":4}}}\n\n"
          + CHAT_DONE,
      CHAT_DONE);

  /** Groq reports a failed generation as an SSE {@code event: error} on an HTTP 200 stream, without [DONE]. */
  static final String GROQ_ERROR_EVENT = chat(delta(0, "{\"role\":\"assistant\",\"content\":null}"))
      + chat(delta(0, "{\"reasoning\":\"Try the tool\"}"))
      + "event: error\ndata: {\"error\":{\"message\":\"Tool call validation failed\",\"type\":"
      + "\"invalid_request_error\",\"code\":\"tool_use_failed\",\"status_code\":400}}\n\n";

  /** Mistral: thinking arrives as a content array, the answer as plain strings. */
  static final Fixture MISTRAL_THINKING = new Fixture("compatible: Mistral thinking chunks", Dialect.OPENAI_CHAT,
      chat(delta(0, "{\"role\":\"assistant\",\"content\":\"\"}"))
          + chat(delta(0, "{\"content\":[{\"type\":\"thinking\",\"thinking\":[{\"type\":\"text\",\"text\":"
              + "\"Look both ways\"}]}]}"))
          + chat(delta(0, "{\"content\":[{\"type\":\"thinking\",\"thinking\":[{\"type\":\"text\",\"text\":"
              + "\" first.\"}]}]}"))
          + chat(delta(0, "{\"content\":\"Wait for green.\"}"))
          + "data: {\"id\":\"chatcmpl-bw7\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-bw\",\"choices\":["
          + finish(0, "stop") + "],\"usage\":{\"prompt_tokens\":4,\"total_tokens\":14,\"completion_tokens\":10}}\n\n"
          + CHAT_DONE,
      CHAT_DONE);

  /** OpenRouter: processing comments, reasoning with details and a signature, a usage chunk with a cost. */
  static final Fixture OPENROUTER_REASONING = new Fixture("compatible: OpenRouter comments and reasoning",
      Dialect.OPENAI_CHAT,
      ": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n"
          + chat(delta(0, "{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":null,\"reasoning_details\":[]}"))
          + chat(delta(0, "{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":\"Simple sum.\","
              + "\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"Simple sum.\",\"index\":0}]}"))
          + chat(delta(0, "{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":null,\"reasoning_details\":"
              + "[{\"type\":\"reasoning.text\",\"text\":\"\",\"signature\":\"sig-bw\",\"index\":0}]}"))
          + chat(delta(0, "{\"role\":\"assistant\",\"content\":\"3 + 4 = 7\"}"))
          + chat(finish(0, "stop"))
          + "data: {\"id\":\"gen-bw\",\"provider\":\"Somewhere\",\"model\":\"gpt-bw\",\"object\":"
          + "\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":9,"
          + "\"total_tokens\":29,\"cost\":0,\"completion_tokens_details\":{\"reasoning_tokens\":3}}}\n\n"
          + CHAT_DONE,
      CHAT_DONE);

  /** OpenRouter: a length finish, then an in-band error object with usage, then [DONE]. */
  static final String OPENROUTER_MIDSTREAM_ERROR = ": OPENROUTER PROCESSING\n\n"
      + chat(delta(0, "{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":\"Greeting\"}"))
      + chat(finish(0, "length"))
      + "data: {\"id\":\"gen-bw\",\"error\":{\"code\":400,\"message\":\"Token limit reached\"},\"model\":\"gpt-bw\","
      + "\"object\":\"chat.completion.chunk\",\"choices\":[" + delta(0, "{\"role\":\"assistant\",\"content\":\"\"}")
      + "],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":10,\"total_tokens\":21}}\n\n"
      + CHAT_DONE;

  /** OpenAI web search and OpenRouter: {@code url_citation} annotations in a delta (here with the finish). */
  static final Fixture CHAT_ANNOTATIONS = new Fixture("compatible: url_citation annotations", Dialect.OPENAI_CHAT,
      CHAT_ROLE
          + text("Lyon has two stations [1].")
          + chat("{\"index\":0,\"delta\":{\"content\":\"\",\"annotations\":[{\"type\":\"url_citation\","
              + "\"url_citation\":{\"url\":\"https://example.org/lyon\",\"title\":\"Lyon stations\","
              + "\"start_index\":22,\"end_index\":25,\"content\":\"Part-Dieu and Perrache\"}},{\"type\":"
              + "\"url_citation\",\"url_citation\":{\"url\":\"https://example.org/sncf\",\"title\":\"SNCF\"}}]},"
              + "\"finish_reason\":\"stop\"}")
          + CHAT_DONE,
      CHAT_DONE);

  /** vLLM's legacy completions: {@code choices[].text}, {@code "usage": null}, text in the finish chunk. */
  static final Fixture VLLM_COMPLETIONS = new Fixture("compatible: vLLM legacy completions", Dialect.OPENAI_CHAT,
      "data: {\"id\":\"cmpl-bw\",\"object\":\"text_completion\",\"model\":\"tiny\",\"choices\":[{\"index\":0,"
          + "\"text\":\"Hello\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}],\"usage\":null}\n\n"
          + "data: {\"id\":\"cmpl-bw\",\"object\":\"text_completion\",\"model\":\"tiny\",\"choices\":[{\"index\":0,"
          + "\"text\":\" there\",\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null}],"
          + "\"usage\":null}\n\n"
          + CHAT_DONE,
      CHAT_DONE);

  // ---- OpenAI Responses ----

  static String responses(int sequence, String type, String rest) {
    return "event: " + type + "\ndata: {\"type\":\"" + type + "\",\"sequence_number\":" + sequence
        + (rest.isEmpty() ? "" : "," + rest) + "}\n\n";
  }

  static String response(String id, boolean background, String status, String usage) {
    return "\"response\":{\"id\":\"" + id + "\",\"object\":\"response\",\"model\":\"gpt-bw-r\",\"status\":\""
        + status + "\",\"background\":" + background + (usage.isEmpty() ? "" : ",\"usage\":" + usage) + "}";
  }

  static String responsesUsage(int input, int output, int reasoning) {
    return "{\"input_tokens\":" + input + ",\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":"
        + output + ",\"output_tokens_details\":{\"reasoning_tokens\":" + reasoning + "},\"total_tokens\":"
        + (input + output) + "}";
  }

  static String responsesText(String id, boolean background, String... deltas) {
    StringBuilder b = new StringBuilder()
        .append(responses(0, "response.created", response(id, background, "in_progress", "")))
        .append(responses(1, "response.in_progress", response(id, background, "in_progress", "")))
        .append(responses(2, "response.output_item.added", "\"output_index\":0,\"item\":{\"id\":\"msg_bw\","
            + "\"type\":\"message\",\"status\":\"in_progress\",\"content\":[],\"role\":\"assistant\"}"))
        .append(responses(3, "response.content_part.added", "\"item_id\":\"msg_bw\",\"output_index\":0,"
            + "\"content_index\":0,\"part\":{\"type\":\"output_text\",\"annotations\":[],\"text\":\"\"}"));
    int seq = 4;
    for (String d : deltas) {
      b.append(responses(seq++, "response.output_text.delta", "\"item_id\":\"msg_bw\",\"output_index\":0,"
          + "\"content_index\":0,\"delta\":\"" + d + "\""));
    }
    b.append(responses(seq++, "response.output_text.done", "\"item_id\":\"msg_bw\",\"output_index\":0,"
            + "\"content_index\":0,\"text\":\"" + String.join("", deltas) + "\""))
        .append(responses(seq++, "response.output_item.done", "\"output_index\":0,\"item\":{\"id\":\"msg_bw\","
            + "\"type\":\"message\",\"status\":\"completed\"}"))
        .append(responses(seq, "response.completed", response(id, background, "completed",
            responsesUsage(10, deltas.length, 0))));
    return b.toString();
  }

  static final Fixture RESPONSES_TEXT = new Fixture("responses: text, terminal event with usage",
      Dialect.OPENAI_RESPONSES, responsesText("resp_bw1", false, "Pack", " an umbrella."),
      "event: response.completed");

  static final Fixture RESPONSES_FUNCTION = new Fixture("responses: function call", Dialect.OPENAI_RESPONSES,
      responses(0, "response.created", response("resp_bw2", false, "in_progress", ""))
          + responses(1, "response.output_item.added", "\"output_index\":0,\"item\":{\"id\":\"fc_bw\",\"type\":"
              + "\"function_call\",\"status\":\"in_progress\",\"arguments\":\"\",\"call_id\":\"call_bwR\","
              + "\"name\":\"convert\"}")
          + responses(2, "response.function_call_arguments.delta", "\"item_id\":\"fc_bw\",\"output_index\":0,"
              + "\"delta\":\"{\\\"eur\\\":\"")
          + responses(3, "response.function_call_arguments.delta", "\"item_id\":\"fc_bw\",\"output_index\":0,"
              + "\"delta\":\"12}\"")
          + responses(4, "response.function_call_arguments.done", "\"item_id\":\"fc_bw\",\"output_index\":0,"
              + "\"arguments\":\"{\\\"eur\\\":12}\"")
          + responses(5, "response.output_item.done", "\"output_index\":0,\"item\":{\"id\":\"fc_bw\",\"type\":"
              + "\"function_call\",\"status\":\"completed\",\"arguments\":\"{\\\"eur\\\":12}\",\"call_id\":"
              + "\"call_bwR\",\"name\":\"convert\"}")
          + responses(6, "response.completed", response("resp_bw2", false, "completed", responsesUsage(40, 9, 0))),
      "event: response.completed");

  static final Fixture RESPONSES_REASONING = new Fixture("responses: reasoning summary, encrypted reasoning, refusal",
      Dialect.OPENAI_RESPONSES,
      responses(0, "response.created", response("resp_bw3", false, "in_progress", ""))
          + responses(1, "response.output_item.added", "\"output_index\":0,\"item\":{\"id\":\"rs_bw\",\"type\":"
              + "\"reasoning\",\"summary\":[]}")
          + responses(2, "response.reasoning_summary_part.added", "\"item_id\":\"rs_bw\",\"output_index\":0,"
              + "\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":\"\"}")
          + responses(3, "response.reasoning_summary_text.delta", "\"item_id\":\"rs_bw\",\"output_index\":0,"
              + "\"summary_index\":0,\"delta\":\"**Weighing**\"")
          + responses(4, "response.reasoning_summary_text.delta", "\"item_id\":\"rs_bw\",\"output_index\":0,"
              + "\"summary_index\":0,\"delta\":\" the request\"")
          + responses(5, "response.output_item.done", "\"output_index\":0,\"item\":{\"id\":\"rs_bw\",\"type\":"
              + "\"reasoning\",\"encrypted_content\":\"gAAAA-bw\",\"summary\":[]}")
          + responses(6, "response.refusal.delta", "\"item_id\":\"msg_bw\",\"output_index\":1,\"content_index\":0,"
              + "\"delta\":\"No.\"")
          + responses(7, "response.completed", response("resp_bw3", false, "completed", responsesUsage(15, 60, 50))),
      "event: response.completed");

  static final Fixture RESPONSES_INCOMPLETE = new Fixture("responses: incomplete, max_output_tokens",
      Dialect.OPENAI_RESPONSES,
      responses(0, "response.created", response("resp_bw4", false, "in_progress", ""))
          + responses(1, "response.output_text.delta", "\"item_id\":\"msg_bw\",\"output_index\":0,"
              + "\"content_index\":0,\"delta\":\"The first\"")
          + "event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"sequence_number\":2,"
          + "\"response\":{\"id\":\"resp_bw4\",\"status\":\"incomplete\",\"background\":false,"
          + "\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"usage\":" + responsesUsage(10, 2, 0)
          + "}}\n\n",
      "event: response.incomplete");

  // ---- Anthropic Messages ----

  static String anthropic(String type, String data) {
    return "event: " + type + "\ndata: " + data + "\n\n";
  }

  static String messageStart(String id, int input) {
    return anthropic("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"" + id + "\",\"type\":"
        + "\"message\",\"role\":\"assistant\",\"model\":\"claude-bw\",\"content\":[],\"stop_reason\":null,"
        + "\"usage\":{\"input_tokens\":" + input + ",\"cache_read_input_tokens\":3,\"output_tokens\":1}}}");
  }

  static String blockStart(int index, String block) {
    return anthropic("content_block_start", "{\"type\":\"content_block_start\",\"index\":" + index
        + ",\"content_block\":" + block + "}");
  }

  static String blockDelta(int index, String delta) {
    return anthropic("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":" + index
        + ",\"delta\":" + delta + "}");
  }

  static String textDelta(int index, String text) {
    return blockDelta(index, "{\"type\":\"text_delta\",\"text\":\"" + text + "\"}");
  }

  static String blockStop(int index) {
    return anthropic("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":" + index + "}   ");
  }

  static String messageDelta(String stopReason, String usage) {
    return anthropic("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" + stopReason
        + "\",\"stop_sequence\":null},\"usage\":" + usage + "}");
  }

  static final String PING = anthropic("ping", "{\"type\": \"ping\"}");
  static final String MESSAGE_STOP = anthropic("message_stop", "{\"type\":\"message_stop\"}");
  static final String OVERLOADED = anthropic("error", "{\"type\": \"error\", \"error\": {\"type\": "
      + "\"overloaded_error\", \"message\": \"Overloaded\"}}");

  static final Fixture ANTHROPIC_TEXT = new Fixture("anthropic: text with pings", Dialect.ANTHROPIC_MESSAGES,
      messageStart("msg_bw1", 25) + blockStart(0, "{\"type\":\"text\",\"text\":\"\"}") + PING
          + textDelta(0, "Take") + textDelta(0, " the TGV.") + blockStop(0) + PING
          + messageDelta("end_turn", "{\"output_tokens\":6}") + MESSAGE_STOP,
      "event: message_stop");

  static final Fixture ANTHROPIC_TOOL = new Fixture("anthropic: text then tool_use with input_json_delta",
      Dialect.ANTHROPIC_MESSAGES,
      messageStart("msg_bw2", 300) + blockStart(0, "{\"type\":\"text\",\"text\":\"\"}")
          + textDelta(0, "Checking.") + blockStop(0)
          + blockStart(1, "{\"type\":\"tool_use\",\"id\":\"toolu_bw\",\"name\":\"book\",\"input\":{}}")
          + blockDelta(1, "{\"type\":\"input_json_delta\",\"partial_json\":\"\"}")
          + blockDelta(1, "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"seat\\\": \\\"12\"}")
          + blockDelta(1, "{\"type\":\"input_json_delta\",\"partial_json\":\"A\\\"}\"}")
          + blockStop(1) + messageDelta("tool_use", "{\"output_tokens\":30}") + MESSAGE_STOP,
      "event: message_stop");

  static final Fixture ANTHROPIC_THINKING = new Fixture("anthropic: thinking, signature, redacted thinking",
      Dialect.ANTHROPIC_MESSAGES,
      messageStart("msg_bw3", 40)
          + blockStart(0, "{\"type\":\"redacted_thinking\",\"data\":\"EqBWredacted\"}") + blockStop(0)
          + blockStart(1, "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}")
          + blockDelta(1, "{\"type\":\"thinking_delta\",\"thinking\":\"Two cities;\"}")
          + blockDelta(1, "{\"type\":\"thinking_delta\",\"thinking\":\" compare.\"}")
          + blockDelta(1, "{\"type\":\"signature_delta\",\"signature\":\"EuYBsig\"}") + blockStop(1)
          + blockStart(2, "{\"type\":\"text\",\"text\":\"\"}") + textDelta(2, "Lyon.") + blockStop(2)
          + messageDelta("end_turn", "{\"output_tokens\":90,\"output_tokens_details\":{\"thinking_tokens\":70}}")
          + MESSAGE_STOP,
      "event: message_stop");

  /** Server-side web search with citations, paused: {@code pause_turn}, usage repeated in message_delta. */
  static final Fixture ANTHROPIC_WEB_SEARCH = new Fixture("anthropic: server tool use, results, citations, pause_turn",
      Dialect.ANTHROPIC_MESSAGES,
      messageStart("msg_bw4", 500)
          + blockStart(0, "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_bw\",\"name\":\"web_search\","
              + "\"input\":{}}")
          + blockDelta(0, "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\": \\\"Lyon\"}")
          + blockDelta(0, "{\"type\":\"input_json_delta\",\"partial_json\":\" weather\\\"}\"}") + blockStop(0)
          + blockStart(1, "{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_bw\",\"content\":"
              + "[{\"type\":\"web_search_result\",\"title\":\"Forecast\",\"url\":\"https://example.org/lyon\"}]}")
          + blockStop(1)
          + blockStart(2, "{\"type\":\"text\",\"text\":\"\"}") + textDelta(2, "Sunny")
          + blockDelta(2, "{\"type\":\"citations_delta\",\"citation\":{\"type\":\"web_search_result_location\","
              + "\"cited_text\":\"Sunny all week\",\"url\":\"https://example.org/lyon\",\"title\":\"Forecast\"}}")
          + textDelta(2, ", 24 degrees.") + blockStop(2)
          + messageDelta("pause_turn", "{\"input_tokens\":9000,\"output_tokens\":120,"
              + "\"server_tool_use\":{\"web_search_requests\":1}}")
          + MESSAGE_STOP,
      "event: message_stop");

  // ---- Gemini ----

  static String gemini(String candidates, String usage) {
    return "data: {\"candidates\": [" + candidates + "],\"usageMetadata\": " + usage
        + ",\"modelVersion\": \"gemini-bw\",\"responseId\": \"bwGem1\"}\r\n\r\n";
  }

  static String geminiUsage(int prompt, int candidates, int total, int thoughts) {
    return "{\"promptTokenCount\": " + prompt + ",\"candidatesTokenCount\": " + candidates + ",\"totalTokenCount\": "
        + total + (thoughts > 0 ? ",\"thoughtsTokenCount\": " + thoughts : "") + "}";
  }

  static final Fixture GEMINI_TEXT = new Fixture("gemini: text in CRLF chunks, usage replaced each chunk",
      Dialect.GEMINI,
      gemini("{\"content\": {\"parts\": [{\"text\": \"Bon\"}],\"role\": \"model\"}}", geminiUsage(6, 0, 6, 0))
          + gemini("{\"content\": {\"parts\": [{\"text\": \"jour\"}],\"role\": \"model\"}}", geminiUsage(6, 0, 6, 0))
          + gemini("{\"content\": {\"parts\": [{\"text\": \" !\\n\"}],\"role\": \"model\"},\"finishReason\": "
              + "\"STOP\"}", geminiUsage(5, 3, 8, 0)),
      "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \" !");

  static final Fixture GEMINI_THOUGHTS = new Fixture("gemini: thought parts and a signature", Dialect.GEMINI,
      gemini("{\"content\": {\"parts\": [{\"text\": \"**Plan** the walk\",\"thought\": true}],\"role\": \"model\"}}",
          geminiUsage(9, 0, 30, 21))
          + gemini("{\"content\": {\"parts\": [{\"text\": \"Cross at\",\"thoughtSignature\": \"CiQBsig\"}],"
              + "\"role\": \"model\"}}", geminiUsage(9, 2, 32, 21))
          + gemini("{\"content\": {\"parts\": [{\"text\": \" the lights.\"}],\"role\": \"model\"},\"finishReason\":"
              + " \"STOP\",\"index\": 0}", geminiUsage(9, 5, 35, 21)),
      "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \" the lights.");

  static final Fixture GEMINI_FUNCTION = new Fixture("gemini: function call with a thought signature",
      Dialect.GEMINI,
      gemini("{\"content\": {\"role\": \"model\",\"parts\": [{\"functionCall\": {\"name\": \"capital\",\"args\": "
          + "{\"country\": \"France\"}},\"thoughtSignature\": \"CiwBsig\"}]}}", geminiUsage(20, 4, 40, 16))
          + gemini("{\"content\": {\"role\": \"model\",\"parts\": [{\"text\": \"\"}]},\"finishReason\": \"STOP\"}",
              geminiUsage(20, 5, 41, 16)),
      "data: {\"candidates\": [{\"content\": {\"role\": \"model\",\"parts\": [{\"text\": \"\"}]}");

  static String geminiParts(String parts) {
    return gemini("{\"content\": {\"role\": \"model\",\"parts\": [" + parts + "]}}", geminiUsage(12, 1, 13, 0));
  }

  static String streamedArg(String path, String value, boolean more) {
    return "{\"jsonPath\": \"" + path + "\", " + value + (more ? ", \"willContinue\": true}" : "}");
  }

  static String streamedArgs(boolean more, String... args) {
    return "{\"functionCall\": {\"partialArgs\": [" + String.join(", ", args) + "]"
        + (more ? ", \"willContinue\": true" : "") + "}}";
  }

  /**
   * Vertex AI with {@code streamFunctionCallArguments}: each call opens with its name and {@code willContinue}, its
   * arguments come as {@code partialArgs} (strings in pieces, numbers, booleans, nested paths, array members), and an
   * empty {@code functionCall} closes it.
   */
  static final Fixture VERTEX_STREAMED_ARGS = new Fixture("vertex: function-call arguments streamed as partialArgs",
      Dialect.GEMINI,
      geminiParts("{\"functionCall\": {\"name\": \"getWeather\", \"willContinue\": true}}")
          + geminiParts(streamedArgs(true, streamedArg("$.location", "\"stringValue\": \"Bos\"", true)))
          + geminiParts(streamedArgs(true, streamedArg("$.location", "\"stringValue\": \"ton\"", false)))
          + geminiParts("{\"functionCall\": {}}")
          + geminiParts("{\"functionCall\": {\"name\": \"getWeather\", \"id\": \"fc-2\", \"willContinue\": true}}")
          + geminiParts(streamedArgs(true, streamedArg("$.location", "\"stringValue\": \"San \\\"Fran\"", true)))
          + geminiParts(streamedArgs(true, streamedArg("$.location", "\"stringValue\": \"cisco\"", false),
              streamedArg("$.days", "\"numberValue\": 3", false),
              streamedArg("$.units.metric", "\"boolValue\": true", false),
              streamedArg("$.units.wind", "\"nullValue\": \"NULL_VALUE\"", false),
              streamedArg("$.stops[0]", "\"stringValue\": \"Oakland\"", false),
              streamedArg("$.stops[1]['zip code']", "\"numberValue\": 94607.5", false)))
          + gemini("{\"content\": {\"role\": \"model\",\"parts\": [{\"functionCall\": {}}]},\"finishReason\": "
              + "\"STOP\"}", geminiUsage(12, 30, 42, 0)),
      "data: {\"candidates\": [{\"content\": {\"role\": \"model\",\"parts\": [{\"functionCall\": {}}]},"
          + "\"finishReason\"");

  /** The Gemini API names its citations {@code citationSources} (Vertex AI: {@code citations}). */
  static final Fixture GEMINI_CITATION_SOURCES = new Fixture("gemini: citationSources of the Gemini API",
      Dialect.GEMINI,
      gemini("{\"content\": {\"parts\": [{\"text\": \"Lyon lies where\"}],\"role\": \"model\"}}",
          geminiUsage(4, 3, 7, 0))
          + gemini("{\"content\": {\"parts\": [{\"text\": \" two rivers meet.\"}],\"role\": \"model\"},"
              + "\"citationMetadata\": {\"citationSources\": [{\"startIndex\": 0,\"endIndex\": 31,\"uri\": "
              + "\"https://example.org/rivers\",\"license\": \"\"}]},\"finishReason\": \"STOP\"}",
              geminiUsage(4, 8, 12, 0)),
      "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \" two");

  // ---- Ollama native NDJSON ----

  static String ollamaChat(String content) {
    return "{\"model\":\"llama-bw\",\"created_at\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"assistant\","
        + "\"content\":\"" + content + "\"},\"done\":false}\n";
  }

  static final String OLLAMA_DONE = "{\"model\":\"llama-bw\",\"created_at\":\"2026-01-01T00:00:01Z\",\"message\":"
      + "{\"role\":\"assistant\",\"content\":\"\"},\"done_reason\":\"stop\",\"done\":true,\"total_duration\":123,"
      + "\"prompt_eval_count\":11,\"eval_count\":4}\n";

  static final Fixture OLLAMA_CHAT = new Fixture("ollama: /api/chat NDJSON", Dialect.OLLAMA,
      ollamaChat("Why") + ollamaChat(" not") + "\n" + ollamaChat(" Lyon?") + OLLAMA_DONE,
      "{\"model\":\"llama-bw\",\"created_at\":\"2026-01-01T00:00:01Z\"");

  static final Fixture OLLAMA_GENERATE = new Fixture("ollama: /api/generate NDJSON with thinking and CRLF",
      Dialect.OLLAMA,
      "{\"model\":\"llama-bw\",\"response\":\"\",\"thinking\":\"Hmm.\",\"done\":false}\r\n"
          + "{\"model\":\"llama-bw\",\"response\":\"Yes\",\"done\":false}\r\n"
          + "{\"model\":\"llama-bw\",\"response\":\".\",\"done\":false}\r\n"
          + "{\"model\":\"llama-bw\",\"response\":\"\",\"done\":true,\"done_reason\":\"length\","
          + "\"prompt_eval_count\":3,\"eval_count\":2,\"context\":[1,2,3]}\r\n",
      "{\"model\":\"llama-bw\",\"response\":\"\",\"done\":true");

  static final Fixture OLLAMA_TOOLS = new Fixture("ollama: tool calls", Dialect.OLLAMA,
      "{\"model\":\"llama-bw\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":"
          + "{\"name\":\"weather\",\"arguments\":{\"city\":\"Lyon\"}}}]},\"done\":false}\n"
          + "{\"model\":\"llama-bw\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done_reason\":\"stop\","
          + "\"done\":true,\"prompt_eval_count\":30,\"eval_count\":12}\n",
      "{\"model\":\"llama-bw\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done_reason\"");
}
