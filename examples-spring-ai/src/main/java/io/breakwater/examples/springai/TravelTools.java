package io.breakwater.examples.springai;

import io.breakwater.http.HttpResponses;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufMono;
import reactor.netty.http.client.HttpClient;

/**
 * The agent's tools, written as any Spring AI tools are: plain methods that call an API and return its answer. They
 * know nothing of Breakwater; {@code application.yml} says what each may take and whether it may run twice.
 */
final class TravelTools {

  private final HttpClient api;

  TravelTools(String apisUrl) {
    this.api = HttpClient.create().baseUrl(apisUrl).disableRetry(true);
  }

  @Tool(name = "weather", description = "The weather forecast for a city")
  String weather(@ToolParam(description = "the city") String city) {
    return HttpResponses.bodyAsString(api.get().uri("/weather/" + city)).block();
  }

  @Tool(name = "book_train", description = "Books a train ticket to a city on a date, and charges the card")
  String bookTrain(@ToolParam(description = "the city") String city,
      @ToolParam(description = "the date, yyyy-MM-dd") String date) {
    String order = "{\"city\":\"" + city + "\",\"date\":\"" + date + "\"}";
    return HttpResponses.bodyAsString(api.post().uri("/bookings").send(ByteBufMono.fromString(Mono.just(order))))
        .block();
  }
}
