package io.breakwater.examples.snippets;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FiguresTest {

  @TempDir
  Path dir;

  private Path report() throws IOException {
    return Files.writeString(dir.resolve("benchmarks.md"), """
        # Benchmarks

        <!-- figures: targets key=2 -->
        | # | measure | target | this run | |
        |---|---|---|---|---|
        | P1 | overhead, 1 thread | ≤ 0.5 | 0.46 | met |
        | P1 | overhead, 2 threads | ≤ 0.5 | 0.08 | met |
        """);
  }

  @Test
  void aQuotedRowIsRefreshedFromTheGeneratedRowOfTheSameKey() throws IOException {
    List<String> problems = new ArrayList<>();
    var generated = Figures.generated(report(), problems);
    Path page = Files.writeString(dir.resolve("page.md"), """
        Text.

        <!-- figures: targets -->
        | # | measure | target | this run | |
        |---|---|---|---|---|
        | P1 | overhead, 2 threads | ≤ 0.5 | 0.31 | met |
        """);

    Figures.rewrite(page, Figures.quoted(page, problems), generated, problems);

    assertThat(problems).isEmpty();
    assertThat(Files.readString(page)).contains("| P1 | overhead, 2 threads | ≤ 0.5 | 0.08 | met |")
        .doesNotContain("0.31").doesNotContain("1 thread");
  }

  @Test
  void aRowWithoutAGeneratedTwinIsReported() throws IOException {
    List<String> problems = new ArrayList<>();
    var generated = Figures.generated(report(), problems);
    Path page = Files.writeString(dir.resolve("page.md"), """
        <!-- figures: targets -->
        | # | measure |
        |---|---|
        | P9 | something else |
        """);

    Figures.rewrite(page, Figures.quoted(page, problems), generated, problems);

    assertThat(String.join("\n", problems)).contains("no single row of 'targets' has the key of | P9 | something else |");
  }

  @Test
  void figuresOfAPagesOwnAreFoundButTargetsAndQuotedTablesAreNot() throws IOException {
    Path page = Files.writeString(dir.resolve("page.md"), """
        The subscriber costs 64 B and 12.5 ns/op, 40 519 ops/s, 4.2× faster than Spring.
        The target is ≤ 100 ns, at most ≥ 2× its peer; a limit of 16 bytes; 3 retries; 5 s.

        ```
        java -jar benchmarks.jar -r 1s   # 42 ns in code blocks are not prose
        ```

        | variant | ns/op | B/op |
        |---|---|---|
        | baseline | 9.1 | 48 |

        <!-- figures: targets -->
        | # | measure | target | this run | |
        |---|---|---|---|---|
        | P1 | overhead, 1 thread | ≤ 0.5 | 0.46 | met |
        """);

    List<String> stray = Figures.strayFigures(page, Figures.quoted(page, new ArrayList<>()));

    assertThat(stray).hasSize(5);
    assertThat(String.join("\n", stray)).contains("'64 B'", "'12.5 ns/op'", "'40 519 ops/s'", "'4.2× faster'",
        "a table of benchmark figures (| variant | ns/op | B/op |)");
  }

  @Test
  void aMarkerNotAboveATableIsReported() throws IOException {
    Path page = Files.writeString(dir.resolve("page.md"), "<!-- figures: targets -->\n\nText.\n");
    List<String> problems = new ArrayList<>();

    Figures.quoted(page, problems);

    assertThat(problems).singleElement().asString().contains("must stand right above a table");
  }
}
