package io.breakwater.examples.boot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A WebFlux application whose agent step calls two third-party APIs through tools configured only in
 * {@code application.yml}: breakers, retries, timeouts and the inbound deadline come from the Breakwater starter.
 * Run it with {@code mvn -pl examples-spring-boot -am spring-boot:run} style tooling, or through its test.
 */
@SpringBootApplication(proxyBeanMethods = false)
public class TravelAssistantApplication {

  public static void main(String[] args) {
    SpringApplication.run(TravelAssistantApplication.class, args);
  }
}
