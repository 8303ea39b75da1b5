package io.breakwater.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * A source the answer cites (Anthropic {@code citations_delta}, OpenAI Responses {@code url_citation}
 * annotations, chat-completions {@code annotations} of OpenAI web search and OpenRouter, Gemini and Vertex AI
 * {@code citationMetadata}).
 *
 * <pre>{@code
 * response.choice(0).citations().forEach(c -> footnotes.add(c.title() + " " + c.url()));
 * }</pre>
 *
 * @param url the source's URL; {@code ""} if none
 * @param title the source's title; {@code ""} if none
 * @param citedText the passage cited; {@code ""} if none
 * @param raw the citation as the server sent it
 */
public record Citation(String url, String title, String citedText, JsonNode raw) {

  public Citation {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(title, "title");
    Objects.requireNonNull(citedText, "citedText");
    Objects.requireNonNull(raw, "raw");
  }
}
