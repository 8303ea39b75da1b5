package io.breakwater.benchmarks.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import reactor.netty.http.client.HttpClient;

/**
 * The {@link LoadServer} in a second JVM on loopback, started with this JVM's classpath; {@link #close()} ends it
 * by closing its stdin.
 */
final class ServerProcess implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final Process process;
  private final int dataPort;
  private final HttpClient control;

  private ServerProcess(Process process, int dataPort, int controlPort) {
    this.process = process;
    this.dataPort = dataPort;
    this.control = HttpClient.create().baseUrl("http://127.0.0.1:" + controlPort);
  }

  static ServerProcess start(String heap) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process process = new ProcessBuilder(java, "-Xmx" + heap, "-XX:+UseParallelGC", "-cp",
        System.getProperty("java.class.path"), LoadServer.class.getName())
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    if (line == null || !line.startsWith("PORTS ")) {
      process.destroyForcibly();
      throw new IOException("the load server did not start; it printed: " + line);
    }
    String[] ports = line.split(" ");
    return new ServerProcess(process, Integer.parseInt(ports[1]), Integer.parseInt(ports[2]));
  }

  String baseUrl() {
    return "http://127.0.0.1:" + dataPort;
  }

  /** What the server saw: open connections, streams it saw cancelled by the client, requests by kind. */
  Stats stats() {
    String body = control.get().uri("/stats").responseContent().aggregate().asString()
        .block(Duration.ofSeconds(30));
    try {
      return new Stats(JSON.readTree(body));
    } catch (IOException e) {
      throw new IllegalStateException("unreadable stats: " + body, e);
    }
  }

  @Override
  public void close() {
    try {
      process.getOutputStream().close();
      if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (IOException | InterruptedException e) {
      process.destroyForcibly();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
  }

  record Stats(JsonNode json) {
    long open() {
      return json.path("open").asLong();
    }

    long cancelled() {
      return json.path("cancelled").asLong();
    }

    long requests(String kind) {
      return json.path("requests").path(kind).asLong();
    }
  }
}
