package io.breakwater.examples.springai;

import java.util.List;
import java.util.Map;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.ai.tool.method.MethodToolCallbackProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The travel agent as a Spring AI application: a {@code ChatClient} with two tools, guarded by Breakwater from
 * {@code application.yml} alone. It runs against {@link ScriptedWorld}: the model is overloaded at first, the weather
 * API stalls, and the model books the train twice.
 *
 * <pre>
 * mvn -q -pl examples-spring-ai -am -DskipTests package exec:java
 * </pre>
 */
@SpringBootApplication(proxyBeanMethods = false)
public class SpringAiTravelAgent {

  /** What one run did, as the world saw it. */
  record Run(String answer, int modelRequests, int weatherRequests, int weatherRequestsClosed, int charges,
      List<String> toolResultsSeen) {}

  // snippet:spring-ai-app
  @Bean
  ToolCallbackProvider travelTools(@Value("${travel.apis-url}") String apisUrl) {
    // run as the Breakwater tools configured under breakwater.tools, by tool name
    return MethodToolCallbackProvider.builder().toolObjects(new TravelTools(apisUrl)).build();
  }

  @Bean
  ChatClient travelAgent(ChatClient.Builder chat, ToolCallbackProvider travelTools) {
    return chat.defaultToolCallbacks(travelTools).build();   // the builder carries BreakwaterAdvisor
  }
  // end-snippet

  /** Starts the scripted world and the application, asks for a trip, and says what happened. */
  static Run run() {
    try (ScriptedWorld world = new ScriptedWorld()) {
      SpringApplication app = new SpringApplication(SpringAiTravelAgent.class);
      app.setWebApplicationType(WebApplicationType.NONE);
      app.setDefaultProperties(Map.of("spring.ai.openai.base-url", world.modelUrl(),
          "travel.apis-url", world.apisUrl()));
      try (ConfigurableApplicationContext context = app.run()) {
        ChatClient agent = context.getBean(ChatClient.class);
        String answer = agent.prompt("Plan my trip to Lyon on 12 December and book the train.")
            .toolContext(Map.of("tenant", "acme"))        // the idempotency namespace of book_train
            .call()
            .content();
        return new Run(answer, world.modelRequests(), world.weatherRequests(), world.weatherRequestsClosed(),
            world.charges(), world.toolResultsSeen());
      }
    }
  }

  public static void main(String[] args) {
    Run run = run();
    System.out.println();
    System.out.println("Answer: " + run.answer());
    System.out.println();
    System.out.println("Model requests:   " + run.modelRequests() + " (the first answered 503 and was retried)");
    System.out.println("Weather requests: " + run.weatherRequests() + ", each cut at its 2 s timeout ("
        + run.weatherRequestsClosed() + " connections closed); the model read why, and what to do instead");
    System.out.println("book_train asked: 2 times by the model; card charged: " + run.charges() + " time(s)");
  }
}
