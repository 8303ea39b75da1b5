package io.breakwater.examples.travel;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What one run of the trip did, as the demo's closing table shows it: the task's time, its answer or failure, the
 * requests each scripted endpoint received, the deposits charged and the model's words sent but left out of the
 * answer.
 */
public record RunSummary(String taskTime, String answerOrFailure, Map<String, String> requests, int charges,
    int tokensLost) {

  /** A run's figures, read from the servers it ran against; {@code answer} is null when the task gave none. */
  static RunSummary of(String taskTime, String answerOrFailure, Map<String, String> notes, ScriptedToolServer tools,
      ScriptedLlmServer llm, @Nullable String answer) {
    Map<String, String> requests = new LinkedHashMap<>();
    requests.put("flights", noted(tools.flightRequests(), notes.get("flights")));
    requests.put("hotels", noted(tools.hotelRequests(), notes.get("hotels")));
    requests.put("attractions", noted(tools.attractionRequests(), notes.get("attractions")));
    requests.put("payments", noted(tools.paymentRequests(), notes.get("payments")));
    requests.put("model streams", noted(llm.requests(), notes.get("model")));
    int kept = answer == null ? 0 : ScriptedLlmServer.words(answer);
    return new RunSummary(taskTime, answerOrFailure, Collections.unmodifiableMap(requests), tools.charges(),
        Math.max(0, llm.wordsSent() - kept));
  }

  private static String noted(int count, @Nullable String note) {
    return note == null ? String.valueOf(count) : count + " (" + note + ")";
  }

  /** Prints the two runs side by side, in plain ASCII. */
  public static void printTable(PrintStream out, RunSummary without, RunSummary with) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"", "without Breakwater", "with Breakwater"});
    rows.add(new String[] {"task time", without.taskTime(), with.taskTime()});
    rows.add(new String[] {"answer or failure", without.answerOrFailure(), with.answerOrFailure()});
    for (String endpoint : List.of("flights", "hotels", "attractions", "payments", "model streams")) {
      rows.add(new String[] {"requests: " + endpoint, without.requests().get(endpoint),
          with.requests().get(endpoint)});
    }
    rows.add(new String[] {"deposits charged", String.valueOf(without.charges()), String.valueOf(with.charges())});
    rows.add(new String[] {"tokens lost", String.valueOf(without.tokensLost()), String.valueOf(with.tokensLost())});
    int[] widths = new int[3];
    for (String[] row : rows) {
      for (int i = 0; i < 3; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    out.println("Same scripted faults, without and with Breakwater:");
    for (int r = 0; r < rows.size(); r++) {
      String[] row = rows.get(r);
      out.println(String.format("  %-" + widths[0] + "s | %-" + widths[1] + "s | %s", row[0], row[1], row[2])
          .stripTrailing());
      if (r == 0) {
        out.println("  " + "-".repeat(widths[0]) + "-+-" + "-".repeat(widths[1]) + "-+-" + "-".repeat(widths[2]));
      }
    }
  }
}
