package io.breakwater.examples.snippets;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.examples.snippets.Figures.Table;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Benchmark figures have one generated place, {@code docs/benchmarks.md} ({@code benchmarks/run-report.sh}); the other
 * pages link to it or quote rows of its tables, so they cannot drift from it. See {@link Figures}.
 *
 * <p>After a new report, refresh the quoted rows with
 * {@code mvn -B -q -pl examples -am test -Dtest=DocFiguresTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dbreakwater.snippets.update=true} ({@code run-report.sh} does).
 */
class DocFiguresTest {

  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final Path REPORT = ROOT.resolve("docs/benchmarks.md");
  private static final boolean UPDATE = Boolean.getBoolean("breakwater.snippets.update");

  private static final List<String> problems = new ArrayList<>();
  private static final List<Path> pages = new ArrayList<>();
  private static final List<Table> quoted = new ArrayList<>();
  private static Map<String, Table> generated;

  @BeforeAll
  static void readTheReportAndThePages() {
    generated = Figures.generated(REPORT, problems);
    pages.addAll(Snippets.files(ROOT.resolve("docs"), ".md"));
    pages.add(ROOT.resolve("README.md"));
    pages.remove(REPORT);
    for (Path page : pages) {
      List<Table> onPage = Figures.quoted(page, problems);
      if (UPDATE && !onPage.isEmpty()) {
        Figures.rewrite(page, onPage, generated, problems);
        onPage = Figures.quoted(page, new ArrayList<>());
      }
      quoted.addAll(onPage);
    }
  }

  @Test
  void theReportNamesItsTablesForQuoting() {
    assertThat(generated).as("named tables in " + REPORT).containsKeys("targets", "overhead");
    assertThat(problems).isEmpty();
  }

  @Test
  void everyQuotedTableIsATableOfTheReportWithItsHeader() {
    List<String> wrong = quoted.stream()
        .filter(t -> !generated.containsKey(t.name()) || !generated.get(t.name()).header().equals(t.header()))
        .map(t -> Snippets.where(t.page(), t.markerLine()) + ": " + (generated.containsKey(t.name())
            ? "the header differs from the one of '" + t.name() + "' in docs/benchmarks.md"
            : "docs/benchmarks.md has no table '" + t.name() + "' (it has " + generated.keySet() + ")"))
        .toList();
    assertThat(wrong).isEmpty();
  }

  @Test
  void everyQuotedRowIsARowOfTheReport() {
    List<String> stale = new ArrayList<>();
    for (Table table : quoted) {
      Table source = generated.get(table.name());
      if (source == null) {
        continue;
      }
      for (String row : table.rows()) {
        if (!source.rows().contains(row)) {
          stale.add(Snippets.where(table.page(), table.firstLine()) + ": " + row + " is not a row of '" + table.name()
              + "' in docs/benchmarks.md (refresh with -Dbreakwater.snippets.update=true, see this test's javadoc)");
        }
      }
    }
    assertThat(stale).isEmpty();
  }

  @Test
  void noPageGivesABenchmarkFigureOfItsOwn() {
    List<String> stray = new ArrayList<>();
    for (Path page : pages) {
      Figures.strayFigures(page, quoted.stream().filter(t -> t.page().equals(page)).toList()).forEach(where ->
          stray.add(where + ": a benchmark figure must come from docs/benchmarks.md: quote a row of one of its tables "
              + "under <!-- figures: <table> --> or link to it"));
    }
    assertThat(stray).isEmpty();
  }
}
