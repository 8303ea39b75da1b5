package io.breakwater.examples.cookbook;

import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.UserMessage;

// snippet:langchain4j-tool-assistant
/** The AI Service the application talks to; the parameters carry the tenant, or the task's Context. */
public interface TravelAssistant {
  String chat(@UserMessage String message, InvocationParameters parameters);
}
// end-snippet
