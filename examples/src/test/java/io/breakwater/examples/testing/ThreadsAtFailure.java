package io.breakwater.examples.testing;

import java.util.Map;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * When a test of this module fails, prints what Reactor's and Netty's threads are doing at that moment: the examples'
 * integration tests share one JVM, and a timer thread held by one test (a blocking read, a lock) shows in another as
 * a timeout. Registered for the module's test JVMs in
 * {@code META-INF/services/org.junit.platform.launcher.TestExecutionListener}.
 */
public final class ThreadsAtFailure implements TestExecutionListener {

  @Override
  public void executionFinished(TestIdentifier test, TestExecutionResult result) {
    if (result.getStatus() != TestExecutionResult.Status.FAILED || !test.isTest()) {
      return;
    }
    StringBuilder out = new StringBuilder("Reactor's and Netty's threads when ")
        .append(test.getDisplayName()).append(" failed (").append(test.getUniqueId()).append("):\n");
    for (Map.Entry<Thread, StackTraceElement[]> thread : Thread.getAllStackTraces().entrySet()) {
      String name = thread.getKey().getName();
      if (name.startsWith("parallel-") || name.startsWith("boundedElastic-") || name.startsWith("single-")
          || name.startsWith("reactor-http-")) {
        out.append('"').append(name).append("\" ").append(thread.getKey().getState()).append('\n');
        StackTraceElement[] frames = thread.getValue();
        for (int i = 0; i < Math.min(frames.length, 24); i++) {
          out.append("    at ").append(frames[i]).append('\n');
        }
      }
    }
    System.err.print(out);
  }
}
