package io.breakwater.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The time-arithmetic rule (docs/reliability.md, "Time arithmetic"): the library's main code never multiplies a time
 * value by a unit factor ({@code * 1_000_000}, {@code * 1e9}, {@code * NANOS_PER_SECOND}, ...) bare, where a large or
 * hostile value would wrap around; it uses {@link Saturating#multiply}, {@link Saturating#nanos}, {@code
 * Math.multiplyExact} or {@code TimeUnit} conversions, which saturate. A line that must multiply anyway (a
 * {@code double}, which saturates at infinity) carries the comment {@code // time-arithmetic: <why it is safe>}.
 * Products of two constants are allowed. Comments and string literals (Lua scripts) are not code.
 */
class TimeArithmeticGuardTest {

  /** A unit factor: a power of 1000 written out, 1e3/1e6/1e9, or a constant named like NANOS_PER_SECOND. */
  private static final String UNIT =
      "(?:1_?000(?:_?000){0,2}L?|1e[369]|[A-Z_]*(?:NANOS|MICROS|MILLIS)_PER_[A-Z_]+)";
  private static final Pattern UNIT_ON_RIGHT =
      Pattern.compile("([\\w.]+(?:\\([^()]*\\))?|\\))\\s*\\*\\s*(?:\\(long\\)\\s*)?" + UNIT + "(?![\\w.])");
  private static final Pattern UNIT_ON_LEFT =
      Pattern.compile("(?<![\\w.])" + UNIT + "\\s*\\*\\s*([\\w.(]+)");
  private static final Pattern CONSTANT = Pattern.compile("[A-Z][A-Z0-9_]*|\\d[\\d_.]*[lLdDfF]?|1e\\d+");
  private static final String WAIVER = "// time-arithmetic:";
  /** {@code receiver.toNanos()}, {@code .toMicros()} or {@code .toMillis()}; the receiver, or its closing bracket. */
  private static final Pattern CONVERSION =
      Pattern.compile("([\\w.]+(?:\\([^()]*\\))?|\\))\\.to(?:Nanos|Micros|Millis)\\(\\)");
  /** A constant: {@code NAME}, {@code Type.NAME}, or {@code Duration.ofX(literal or NAME)}. */
  private static final Pattern CONSTANT_DURATION = Pattern.compile(
      "(?:[\\w.]*\\.)?[A-Z][A-Z0-9_]*|Duration\\.of\\w+\\((?:\\d[\\d_]*L?(?: \\* \\d[\\d_]*L?)*|(?:[\\w.]*\\.)?[A-Z][A-Z0-9_]*)\\)");

  @Test
  void libraryCodeMultipliesTimeOnlyWithSaturatingHelpers() throws IOException {
    assertThat(linesWhere(TimeArithmeticGuardTest::bareProduct))
        .as("bare time multiplications: use Saturating.multiply/nanos, Math.multiplyExact or TimeUnit, or add "
            + WAIVER + " <why it cannot overflow>")
        .isEmpty();
  }

  @Test
  void libraryCodeConvertsDurationsOnlyWithSaturatingHelpers() throws IOException {
    assertThat(linesWhere(TimeArithmeticGuardTest::throwingConversion))
        .as("Duration.toNanos()/toMillis()/toMicros() throw past what a long holds: use Saturating.nanos/millis, or "
            + "add " + WAIVER + " <why the value is bounded>")
        .isEmpty();
  }

  /**
   * The lines of the library's main code (not {@code Saturating} itself, whose helpers are guarded by their own range
   * checks) whose code, comments and strings left out, matches {@code offending}, unless they carry the waiver.
   */
  private static List<String> linesWhere(Predicate<String> offending) throws IOException {
    List<String> found = new ArrayList<>();
    for (Path file : librarySources()) {
      if (file.getFileName().toString().equals("Saturating.java")) {
        continue;
      }
      List<String> lines = Files.readAllLines(file);
      String[] code = codeOnly(String.join("\n", lines)).split("\n", -1);
      for (int i = 0; i < code.length; i++) {
        if (!lines.get(i).contains(WAIVER) && offending.test(code[i])) {
          found.add(file.getFileName() + ":" + (i + 1) + ": " + lines.get(i).strip());
        }
      }
    }
    return found;
  }

  @Test
  void theGuardFindsTheConversionsThatMayThrow() {
    assertThat(throwingConversion("long n = timeout.toNanos();")).isTrue();
    assertThat(throwingConversion("long n = spec.budget().toNanos() / 2;")).isTrue();
    assertThat(throwingConversion("long n = (every != null ? every : LEARNT).toNanos();")).isTrue();
    assertThat(throwingConversion("semaphore.tryAcquire(0, lease.toMillis(), MILLISECONDS);")).isTrue();
    assertThat(throwingConversion("long n = DEFAULT_CAP.toNanos();")).isFalse();
    assertThat(throwingConversion("long n = DeadlineSpec.DEFAULT_PER_CALL_CAP.toNanos();")).isFalse();
    assertThat(throwingConversion("long n = Duration.ofSeconds(DEFAULT_IDLE_SECONDS).toNanos();")).isFalse();
    assertThat(throwingConversion("long n = Duration.ofMinutes(10).toMillis();")).isFalse();
    assertThat(throwingConversion("static final long MAX = Duration.ofDays(20 * 365).toMillis();")).isFalse();
    assertThat(throwingConversion("long n = Saturating.nanos(timeout);")).isFalse();
  }

  /** A conversion of a {@code Duration} that is not a constant to a long count of small units. */
  private static boolean throwingConversion(String code) {
    Matcher m = CONVERSION.matcher(code);
    while (m.find()) {
      if (!CONSTANT_DURATION.matcher(m.group(1)).matches()) {
        return true;
      }
    }
    return false;
  }

  @Test
  void theGuardFindsTheShapesItIsFor() {
    assertThat(bareProduct("long nanos = millis * 1_000_000L;")).isTrue();
    assertThat(bareProduct("return seconds * 1_000_000_000L + nano;")).isTrue();
    assertThat(bareProduct("long n = (long) (ratio * 1e9);")).isTrue();
    assertThat(bareProduct("long n = wait * 1000;")).isTrue();
    assertThat(bareProduct("long n = 1_000_000 * reply.millis();")).isTrue();
    assertThat(bareProduct("long n = value(x) * NANOS_PER_SECOND;")).isTrue();
    assertThat(bareProduct("static final long HOUR = 3600 * NANOS_PER_SECOND;")).isFalse();
    assertThat(bareProduct("static final double RATE = Math.log(2) / (HALF_LIFE_SECONDS * 1e9);")).isFalse();
    assertThat(bareProduct("long n = Saturating.multiply(millis, 1_000_000L);")).isFalse();
    assertThat(bareProduct("int n = size * 2;")).isFalse();
    assertThat(codeOnly("String lua = \"local now = t[1] * 1000000\"; // x * 1000")).doesNotContain("*");
    assertThat(codeOnly("String lua = \"\"\"\n  local now = t[1] * 1000000\n  \"\"\";")).doesNotContain("*")
        .hasLineCount(3);
  }

  private static boolean bareProduct(String code) {
    Matcher right = UNIT_ON_RIGHT.matcher(code);
    while (right.find()) {
      if (!CONSTANT.matcher(right.group(1)).matches()) {
        return true;
      }
    }
    Matcher left = UNIT_ON_LEFT.matcher(code);
    while (left.find()) {
      if (!CONSTANT.matcher(left.group(1)).matches()) {
        return true;
      }
    }
    return false;
  }

  /** {@code source} with comments and string, text-block and char literals blanked, line breaks kept. */
  static String codeOnly(String source) {
    StringBuilder out = new StringBuilder(source.length());
    int i = 0;
    int n = source.length();
    while (i < n) {
      char c = source.charAt(i);
      if (source.startsWith("//", i)) {
        while (i < n && source.charAt(i) != '\n') {
          i++;
        }
      } else if (source.startsWith("/*", i)) {
        int end = source.indexOf("*/", i + 2);
        i = blank(source, i, end < 0 ? n : end + 2, out);
      } else if (source.startsWith("\"\"\"", i)) {
        int end = source.indexOf("\"\"\"", i + 3);
        i = blank(source, i, end < 0 ? n : end + 3, out);
      } else if (c == '"' || c == '\'') {
        int j = i + 1;
        while (j < n && source.charAt(j) != c && source.charAt(j) != '\n') {
          j += source.charAt(j) == '\\' ? 2 : 1;
        }
        i = blank(source, i, Math.min(n, j + 1), out);
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }

  private static int blank(String source, int from, int to, StringBuilder out) {
    for (int k = from; k < to; k++) {
      out.append(source.charAt(k) == '\n' ? '\n' : ' ');
    }
    return to;
  }

  /** The main sources of the published modules (not the examples or benchmarks). */
  private static List<Path> librarySources() throws IOException {
    Path root = Paths.get("").toAbsolutePath();
    while (!Files.exists(root.resolve("core").resolve("pom.xml"))) {
      root = root.getParent();
    }
    List<Path> files = new ArrayList<>();
    for (String module : List.of("core", "redis-store", "spring-webflux", "spring-boot-starter")) {
      Path sources = root.resolve(module).resolve("src/main/java");
      try (Stream<Path> walk = Files.walk(sources)) {
        walk.filter(p -> p.toString().endsWith(".java")).sorted().forEach(files::add);
      }
    }
    assertThat(files).hasSizeGreaterThan(100);
    return files;
  }
}
