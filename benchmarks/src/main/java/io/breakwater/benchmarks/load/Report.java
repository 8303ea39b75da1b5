package io.breakwater.benchmarks.load;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The figures of one harness run, printed as the Markdown tables docs/reliability.md keeps. */
public final class Report {

  private final List<String> figures = new ArrayList<>();
  private final List<String> checks = new ArrayList<>();
  private boolean allPassed = true;

  void figure(String scenario, String load, String measure, Object value) {
    figures.add("| " + scenario + " | " + load + " | " + measure + " | " + value + " |");
    System.err.println("[load] " + scenario + " · " + load + " · " + measure + ": " + value);
  }

  void check(String doneWhen, String measured, boolean passed) {
    allPassed &= passed;
    checks.add("| " + doneWhen + " | " + measured + " | " + (passed ? "pass" : "**FAIL**") + " |");
  }

  /** Whether every done-when check passed. */
  public boolean allPassed() {
    return allPassed;
  }

  /** Whether the check whose text starts with {@code doneWhen} ran and passed. */
  public boolean passed(String doneWhen) {
    return checks.stream().anyMatch(row -> row.startsWith("| " + doneWhen) && row.endsWith("| pass |"));
  }

  /** The figures, then the checks, as two Markdown tables under {@code header}. */
  public String markdown(String header) {
    StringBuilder out = new StringBuilder(header).append("\n\n");
    out.append("| scenario | load | measure | value |\n|---|---|---|---|\n");
    figures.forEach(row -> out.append(row).append('\n'));
    out.append("\n| done when | measured | result |\n|---|---|---|\n");
    checks.forEach(row -> out.append(row).append('\n'));
    return out.toString();
  }

  static String ms(double nanos) {
    return String.format(Locale.ROOT, "%.0f ms", nanos / 1e6);
  }

  static String percent(long part, long whole) {
    return whole == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f %% (%d of %d)", 100.0 * part / whole, part, whole);
  }
}
