package io.breakwater.examples.snippets;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Benchmark figures in the docs, which come from one generated place: {@code docs/benchmarks.md}, written by
 * {@code BenchmarkReport}, names each of its tables with {@code <!-- figures: <name> key=<n> -->} right above it. A
 * page quotes rows of one with {@code <!-- figures: <name> -->} right above a table of the same header: each row must
 * be a row of the generated table, known by its first {@code n} cells. Anywhere else a page may not give a benchmark
 * figure (a time or an allocation per operation, a throughput, a speed-up) nor a table of them: it links to
 * {@code benchmarks.md} or quotes it.
 */
final class Figures {

  private static final Pattern GENERATED = Pattern.compile("^<!-- figures: ([a-z0-9]+(?:-[a-z0-9]+)*) key=(\\d+) -->$");
  private static final Pattern QUOTE = Pattern.compile("^<!-- figures: (\\S+) -->$");
  private static final String FENCE = "```";

  /**
   * A benchmark figure given in prose: a time or size per operation (ns, µs, B, with or without a {@code /op}-like
   * unit), a throughput, or a speed-up against a peer. Targets ({@code ≤ 100 ns}) are not figures.
   */
  static final Pattern FIGURE = Pattern.compile("(?<![≤≥<>] )(?<![≤≥<>\\w.])\\d[\\d ,.]*\\s?"
      + "(?:(?:ns|µs|B)(?:/\\w+)?(?![\\w/])|(?:k )?ops/s|× (?:faster|slower|cheaper|of|the bare))");

  /** The header of a table of benchmark figures: it names a unit of them. */
  private static final Pattern FIGURES_HEADER = Pattern.compile("\\b(?:ns|µs|B)/\\w+|\\bops/s\\b|\\b(?:ns|µs)\\b");

  /** A table in a page: its marker's name, its key columns (generated tables), and its lines. */
  record Table(Path page, int markerLine, String name, int keyColumns, String header, List<String> rows,
      int firstLine, int endLine) {

    /** The generated row with the same key as {@code row}, if there is exactly one. */
    List<String> rowsKeyedLike(String row, int keyColumns) {
      List<String> key = cells(row).subList(0, Math.min(keyColumns, cells(row).size()));
      return rows.stream().filter(r -> cells(r).size() >= keyColumns && cells(r).subList(0, keyColumns).equals(key))
          .toList();
    }
  }

  private Figures() {}

  /** The named tables of the generated page, by name. */
  static Map<String, Table> generated(Path report, List<String> problems) {
    Map<String, Table> tables = new LinkedHashMap<>();
    for (Table table : tables(report, GENERATED, problems)) {
      if (tables.putIfAbsent(table.name(), table) != null) {
        problems.add(Snippets.where(report, table.markerLine()) + ": the table name '" + table.name() + "' is used twice");
      }
    }
    return tables;
  }

  /** The tables a page quotes from the generated one. */
  static List<Table> quoted(Path page, List<String> problems) {
    return tables(page, QUOTE, problems);
  }

  private static List<Table> tables(Path page, Pattern marker, List<String> problems) {
    List<String> lines = read(page);
    List<Table> tables = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      Matcher m = marker.matcher(lines.get(i));
      if (!m.matches()) {
        continue;
      }
      int first = i + 1;
      int end = first;
      while (end < lines.size() && lines.get(end).startsWith("|")) {
        end++;
      }
      if (end - first < 2) {
        problems.add(Snippets.where(page, i) + ": the figures marker must stand right above a table");
        continue;
      }
      int key = m.groupCount() >= 2 ? Integer.parseInt(m.group(2)) : 0;
      tables.add(new Table(page, i, m.group(1), key, lines.get(first), List.copyOf(lines.subList(first + 2, end)),
          first, end));
      i = end - 1;
    }
    return tables;
  }

  /** The lines of {@code page} (outside code blocks and quoted tables) that give benchmark figures of their own. */
  static List<String> strayFigures(Path page, List<Table> quoted) {
    List<String> lines = read(page);
    boolean[] skip = new boolean[lines.size()];
    for (Table table : quoted) {
      Arrays.fill(skip, table.markerLine(), table.endLine(), true);
    }
    List<String> stray = new ArrayList<>();
    boolean inCode = false;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.startsWith(FENCE)) {
        inCode = !inCode;
        continue;
      }
      if (inCode || skip[i]) {
        continue;
      }
      boolean tableStart = line.startsWith("|") && (i == 0 || !lines.get(i - 1).startsWith("|"));
      if (tableStart && FIGURES_HEADER.matcher(line).find()) {
        stray.add(Snippets.where(page, i) + ": a table of benchmark figures (" + line.strip() + ")");
        while (i + 1 < lines.size() && lines.get(i + 1).startsWith("|")) {
          i++;
        }
        continue;
      }
      Matcher figure = FIGURE.matcher(line);
      while (figure.find()) {
        stray.add(Snippets.where(page, i) + ": '" + figure.group().strip() + "'");
      }
    }
    return stray;
  }

  /** The page with each quoted table's header and rows replaced by the generated ones of the same keys. */
  static void rewrite(Path page, List<Table> quoted, Map<String, Table> generated, List<String> problems) {
    List<String> lines = new ArrayList<>(read(page));
    for (int t = quoted.size() - 1; t >= 0; t--) {
      Table table = quoted.get(t);
      Table source = generated.get(table.name());
      if (source == null) {
        continue;
      }
      List<String> fresh = new ArrayList<>(List.of(source.header(), separator(source.header())));
      for (String row : table.rows()) {
        List<String> match = source.rowsKeyedLike(row, source.keyColumns());
        if (match.size() == 1) {
          fresh.add(match.get(0));
        } else {
          fresh.add(row);
          problems.add(Snippets.where(page, table.firstLine()) + ": no single row of '" + table.name() + "' has the key "
              + "of " + row);
        }
      }
      List<String> range = lines.subList(table.firstLine(), table.endLine());
      range.clear();
      range.addAll(fresh);
    }
    try {
      Files.writeString(page, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static List<String> cells(String row) {
    String inner = row.strip();
    inner = inner.substring(1, inner.endsWith("|") ? inner.length() - 1 : inner.length());
    return Arrays.stream(inner.split("\\|", -1)).map(String::strip).toList();
  }

  private static String separator(String header) {
    return "|---".repeat(cells(header).size()) + "|";
  }

  private static List<String> read(Path file) {
    try {
      return Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
