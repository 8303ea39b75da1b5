package io.breakwater.examples.snippets;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.examples.snippets.Snippets.Block;
import io.breakwater.examples.snippets.Snippets.Region;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every Java snippet in the README and {@code docs/} is quoted from a program in {@code examples}, which compiles and
 * runs in the test suite, so the docs cannot drift from the API.
 *
 * <p>After changing an example, refresh the docs with
 * {@code mvn -B -q -pl examples -am -Dtest=DocSnippetsTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dbreakwater.snippets.update=true test}.
 */
class DocSnippetsTest {

  private static final Path MODULE = Path.of("").toAbsolutePath();
  private static final Path ROOT = MODULE.getParent();
  private static final boolean UPDATE = Boolean.getBoolean("breakwater.snippets.update");

  private static final List<String> sourceProblems = new ArrayList<>();
  private static final List<String> pageProblems = new ArrayList<>();
  private static Map<String, Region> regions;
  private static List<Block> blocks;

  @BeforeAll
  static void readSourcesAndPages() {
    Path checkersOwnTests = MODULE.resolve("src/test/java/io/breakwater/examples/snippets");
    regions = Snippets.regions(MODULE.resolve("src"), checkersOwnTests, sourceProblems);
    // the Spring Boot and Spring AI examples are modules of their own (Boot's dependency management stays out of this one)
    for (String module : Snippets.BOOT_EXAMPLE_MODULES) {
      Snippets.regions(ROOT.resolve(module + "/src"), checkersOwnTests, sourceProblems).forEach((name, region) -> {
        if (regions.putIfAbsent(name, region) != null) {
          sourceProblems.add("snippet '" + name + "' is named twice, the second time in " + module);
        }
      });
    }
    List<Path> pages = new ArrayList<>(Snippets.files(ROOT.resolve("docs"), ".md"));
    pages.add(ROOT.resolve("README.md"));
    blocks = new ArrayList<>();
    for (Path page : pages) {
      List<Block> onPage = Snippets.javaBlocks(page, pageProblems);
      if (UPDATE) {
        Snippets.rewrite(page, onPage, regions);
        onPage = Snippets.javaBlocks(page, new ArrayList<>());
      }
      blocks.addAll(onPage);
    }
  }

  @Test
  void theDocsHaveJavaSnippetsAndTheExamplesHaveRegions() {
    assertThat(blocks).as("java blocks found under " + ROOT).hasSizeGreaterThan(20);
    assertThat(regions).isNotEmpty();
  }

  @Test
  void everySnippetRegionIsWellFormedAndNamedOnce() {
    assertThat(sourceProblems).isEmpty();
    assertThat(pageProblems).isEmpty();
  }

  @Test
  void everyJavaBlockInTheDocsQuotesANamedExampleRegion() {
    List<String> unquoted = blocks.stream()
        .filter(b -> b.name() == null || !regions.containsKey(b.name()))
        .map(b -> Snippets.where(b.page(), b.fenceLine())
            + (b.name() == null ? ": a ```java block without <!-- snippet: <name> --> right above it"
                : ": no region // snippet:" + b.name() + " in examples/src"))
        .toList();
    assertThat(unquoted).isEmpty();
  }

  @Test
  void everyQuotedBlockMatchesItsRegionInTheExamples() {
    List<String> stale = blocks.stream()
        .filter(b -> b.name() != null && regions.containsKey(b.name()))
        .filter(b -> !b.text().equals(regions.get(b.name()).quotedText(b.withImports())))
        .map(b -> Snippets.where(b.page(), b.fenceLine()) + ": differs from " + regions.get(b.name()).file() + ":"
            + regions.get(b.name()).line()
            + " (refresh with -Dbreakwater.snippets.update=true, see this test's javadoc)")
        .toList();
    assertThat(stale).isEmpty();
  }

  /**
   * A newcomer copies any block, not only a page's first (a held-out newcomer run found 0 of 78 blocks compiling as
   * shown when only the first of each page showed its imports): every block shows the imports its region uses.
   */
  @Test
  void everySnippetShowsTheImportsItUses() {
    List<String> withoutImports = blocks.stream()
        .filter(b -> b.name() != null && !b.withImports() && !showsImports(b.text()))
        .map(b -> Snippets.where(b.page(), b.fenceLine() - 1) + ": a snippet must show the imports it uses: "
            + "write <!-- snippet: " + b.name() + " with-imports --> and refresh (see this test's javadoc)")
        .toList();
    assertThat(withoutImports).isEmpty();
  }

  /** A block that is itself a list of imports (as a page may show before quoting a class's parts) shows them. */
  private static boolean showsImports(String text) {
    return text.lines().anyMatch(line -> line.startsWith("import "));
  }

  @Test
  void everyRegionIsQuotedSomewhere() {
    Set<String> quoted = new HashSet<>();
    blocks.forEach(b -> quoted.add(b.name()));
    List<String> unused = regions.values().stream()
        .filter(r -> !quoted.contains(r.name()))
        .map(r -> r.file() + ":" + r.line() + ": snippet '" + r.name() + "' is quoted by no page")
        .toList();
    assertThat(unused).isEmpty();
  }
}
