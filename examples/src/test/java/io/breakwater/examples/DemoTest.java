package io.breakwater.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class DemoTest {

  @Test
  void demoBoundsTheStalledCallAndSkipsTheExpiredOne() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    int calls = new Demo(new PrintStream(buffer, true, StandardCharsets.UTF_8)).run();
    String out = buffer.toString(StandardCharsets.UTF_8);

    assertThat(out).contains("1. weather, within a 2 s task deadline -> sunny (server had ");
    assertThat(out).contains("2. flights (the server stalls 28 s), within a 500 ms deadline -> stopped: "
        + "Deadline 'task /flights' exceeded: ");
    assertThat(out).contains("3. weather, with a budget already spent -> stopped: Deadline 'task /weather' "
        + "exceeded: 0ns of 0ns used");
    assertThat(calls).as("the expired call never reaches the server").isEqualTo(2);
  }
}
