package io.breakwater.examples.snippets;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The user's pages stay short and speak to the user: each page of {@code docs/} and the README holds at most
 * {@link #MAX_LINES} lines, and none narrates how the project was built (work sessions, review code names, who built
 * what) — evidence belongs in generated reports and history in the git log and {@code CHANGELOG.md}.
 *
 * <p>Both are settings: {@code -Dbreakwater.docs.maxLines=600} and {@code -Dbreakwater.docs.buildWords=regex,regex}
 * (Java regular expressions, matched case-insensitively, separated by commas) replace the defaults.
 * {@link #PENDING_REWRITE} lists the pages that do not pass yet; a page leaves it when it is rewritten (the test fails
 * if a listed page passes, so the list only shrinks).
 *
 * <p>A user page (outside {@code docs/appendix/}) names at most {@link #MAX_TEST_CLASSES} test classes: what a test
 * proves belongs in a table of the appendix, and the page keeps the guarantee, with its figure when it has one, and
 * one line linking to its evidence. {@code -Dbreakwater.docs.maxTestClasses=0} tightens it. {@link #PENDING_EVIDENCE}
 * lists the pages whose evidence has not moved yet, with the same rule as {@link #PENDING_REWRITE}; the generated
 * reports ({@link #GENERATED_REPORTS}) are evidence, and exempt.
 */
class DocPagesTest {

  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

  /** The most lines a page may hold: a user reads a page or two, then follows a link. */
  static final int MAX_LINES = Integer.getInteger("breakwater.docs.maxLines", 600);

  /** Words and phrases that narrate the build of the project rather than tell the user something. */
  static final List<Pattern> BUILD_WORDS = patterns(System.getProperty("breakwater.docs.buildWords",
      "\\bsessions?\\s+\\d+,\\bthis session\\b,\\b(earlier|previous|last|next) sessions?\\b,\\bwork periods?\\b,"
          + "\\bstop \\d+\\b,\\bengineers?'? builds\\b,\\bname the engineer\\b,\\bother engineers\\b,"
          + "\\b(from|found by|after|in) the review\\b,\\breviewers?\\b,\\b(CHECKS|HOSTILE|REVIEW)\\d+,"
          + "\\bhow (this|the project) was built\\b"));

  /** Pages that do not pass yet, waiting for their rewrite; each leaves the list once it passes. */
  static final Set<String> PENDING_REWRITE = Set.of();

  /**
   * Reports that {@code benchmarks/run-report.sh} writes: evidence themselves (they say what measured each figure),
   * held to the page rules but not to the test-class limit.
   */
  static final Set<String> GENERATED_REPORTS = Set.of("docs/benchmarks.md");

  /** The most test classes a user page may name; the appendix names the rest. */
  static final int MAX_TEST_CLASSES = Integer.getInteger("breakwater.docs.maxTestClasses", 2);

  /**
   * A test class's name: a capitalised word with a lower-case letter after its capital, ending in {@code Test} or
   * {@code IT} ({@code LimitedByTest}, {@code RedisFaultsIT}; not {@code WAIT} nor {@code JIT}, nor a benchmark's
   * {@code idleTimeoutWithProgressTest}).
   */
  static final Pattern TEST_CLASS = Pattern.compile("\\b[A-Z][a-z][A-Za-z0-9]*(?:Test|IT)\\b");

  /** User pages that still name more test classes than allowed, waiting for their evidence to move to the appendix. */
  static final Set<String> PENDING_EVIDENCE = Set.of();

  private static List<Pattern> patterns(String commaSeparated) {
    return Arrays.stream(commaSeparated.split(","))
        .filter(s -> !s.isBlank())
        .map(s -> Pattern.compile(s.strip(), Pattern.CASE_INSENSITIVE))
        .toList();
  }

  /** Every page: {@code docs/*.md} and the README, by its path from the repository's root. */
  private static List<Path> pages() {
    List<Path> pages = new ArrayList<>(Snippets.files(ROOT.resolve("docs"), ".md"));
    pages.add(ROOT.resolve("README.md"));
    return pages;
  }

  /** The user's pages: {@link #pages()} but the appendix, which is where evidence goes. */
  private static List<Path> userPages() {
    Path appendix = ROOT.resolve("docs/appendix");
    return pages().stream()
        .filter(page -> !page.startsWith(appendix) && !GENERATED_REPORTS.contains(name(page)))
        .toList();
  }

  private static String name(Path page) {
    return ROOT.relativize(page).toString().replace('\\', '/');
  }

  /** What is wrong with {@code page}: empty when it passes. */
  static List<String> problems(Path page) {
    List<String> lines;
    try {
      lines = Files.readAllLines(page, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> problems = new ArrayList<>();
    if (lines.size() > MAX_LINES) {
      problems.add(name(page) + " has " + lines.size() + " lines, more than " + MAX_LINES + ": lead with what the user "
          + "needs and move evidence to an appendix or a generated report");
    }
    for (int i = 0; i < lines.size(); i++) {
      for (Pattern word : BUILD_WORDS) {
        Matcher m = word.matcher(lines.get(i));
        if (m.find()) {
          problems.add(name(page) + ":" + (i + 1) + " narrates the build ('" + m.group() + "'): say what the user "
              + "gets; history belongs in the git log and CHANGELOG.md");
        }
      }
    }
    return problems;
  }

  /** The test classes {@code page} names, each once, in order of name. */
  static SortedSet<String> testClasses(Path page) {
    String text;
    try {
      text = Files.readString(page, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    SortedSet<String> names = new TreeSet<>();
    Matcher m = TEST_CLASS.matcher(text);
    while (m.find()) {
      names.add(m.group());
    }
    return names;
  }

  /** What is wrong with the evidence on {@code page}: empty when it names at most {@link #MAX_TEST_CLASSES} tests. */
  static List<String> evidenceProblems(Path page) {
    SortedSet<String> names = testClasses(page);
    if (names.size() <= MAX_TEST_CLASSES) {
      return List.of();
    }
    return List.of(name(page) + " names " + names.size() + " test classes " + names + ", more than " + MAX_TEST_CLASSES
        + ": keep the guarantee (and its figure) on the page, move what each test proves to a table of docs/appendix/ "
        + "and end the page with one line linking to it");
  }

  /** The problems {@code check} finds on {@code pages}, but on the pending ones. */
  private static List<String> problemsOutside(Set<String> pending, List<Path> pages,
      Function<Path, List<String>> check) {
    return pages.stream().filter(page -> !pending.contains(name(page))).flatMap(page -> check.apply(page).stream())
        .toList();
  }

  /** Fails when a page of {@code pending} passes {@code check}, or is not among {@code pages} at all. */
  private static void assertEveryPendingPageIsAPageThatStillFails(String list, Set<String> pending, List<Path> pages,
      Function<Path, List<String>> check) {
    Set<String> passing = new TreeSet<>();
    Set<String> unknown = new TreeSet<>(pending);
    for (Path page : pages) {
      unknown.remove(name(page));
      if (pending.contains(name(page)) && check.apply(page).isEmpty()) {
        passing.add(name(page));
      }
    }
    assertThat(passing).as("pages of " + list + " that now pass: remove them from it").isEmpty();
    assertThat(unknown).as("pages of " + list + " that are not pages checked here").isEmpty();
  }

  @Test
  void aUserPageNamesAtMostAFewTestClasses() {
    assertThat(problemsOutside(PENDING_EVIDENCE, userPages(), DocPagesTest::evidenceProblems)).isEmpty();
  }

  @Test
  void aPageWaitingForItsEvidenceToMoveLeavesTheListOnceItPasses() {
    assertEveryPendingPageIsAPageThatStillFails("PENDING_EVIDENCE", PENDING_EVIDENCE, userPages(),
        DocPagesTest::evidenceProblems);
  }

  @Test
  void theCheckCountsEachTestClassOnceAndOnlyTestClasses(@TempDir Path dir) throws IOException {
    Path page = dir.resolve("page.md");
    Files.write(page, List.of("# Page", "`LimitedByTest.waitingCallsRunInArrivalOrder` and `LimitedByTest` again;",
        "`RedisFaultsIT`, `WAIT 1`, the JIT, `idleTimeoutWithProgressTest`, Tests, Testing."), StandardCharsets.UTF_8);
    assertThat(testClasses(page)).containsExactly("LimitedByTest", "RedisFaultsIT");
    Files.writeString(page, "`HerdTest`, `BackoffTest` and `RetryRaceTest`\n", StandardCharsets.UTF_8,
        StandardOpenOption.APPEND);
    assertThat(evidenceProblems(page)).singleElement().asString()
        .contains("names 5 test classes [BackoffTest, HerdTest, LimitedByTest, RedisFaultsIT, RetryRaceTest]",
            "more than " + MAX_TEST_CLASSES);
  }

  @Test
  void everyPageIsShortAndSpeaksToTheUser() {
    assertThat(problemsOutside(PENDING_REWRITE, pages(), DocPagesTest::problems)).isEmpty();
  }

  @Test
  void aPageWaitingForItsRewriteLeavesTheListOnceItPasses() {
    assertEveryPendingPageIsAPageThatStillFails("PENDING_REWRITE", PENDING_REWRITE, pages(), DocPagesTest::problems);
  }

  @Test
  void theCheckFindsALongPageAndTheBuildNarrated(@TempDir Path dir) throws IOException {
    Path page = dir.resolve("page.md");
    List<String> lines = new ArrayList<>(List.of("# Page", "Found in session 11 by the reviewers (CHECKS8-B).",
        "Cookies and the session id are redacted."));
    while (lines.size() <= MAX_LINES) {
      lines.add("text");
    }
    Files.write(page, lines, StandardCharsets.UTF_8);
    List<String> problems = problems(page);
    assertThat(problems).hasSize(4);
    assertThat(problems.get(0)).contains("has " + lines.size() + " lines");
    assertThat(String.join("\n", problems)).contains(":2 narrates the build ('session 11')", "('reviewers')",
        "('CHECKS8')").doesNotContain(":3 ");
  }
}
