package io.breakwater.examples.snippets;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The docs' code snippets and the example sources they quote.
 *
 * <p>In an example's Java source, a quoted region sits between {@code // snippet:<name>} and {@code // end-snippet},
 * each on its own line. In markdown, a fenced {@code java} block quotes it when the line right above the fence is
 * {@code <!-- snippet: <name> -->}; the block holds the region with its common indentation removed.
 */
final class Snippets {

  private static final Pattern START = Pattern.compile("^\\s*// snippet:(\\S*)\\s*$");
  private static final Pattern END = Pattern.compile("^\\s*// end-snippet\\s*$");
  private static final Pattern MARKER = Pattern.compile("^<!-- snippet: (\\S+) -->$");
  private static final Pattern NAME = Pattern.compile("[a-z0-9]+(-[a-z0-9]+)*");
  private static final String FENCE = "```";

  /** A named region of an example source. */
  record Region(String name, Path file, int line, String text) {}

  /** A fenced {@code java} block in a markdown page: its marker's name (or null) and its lines' range. */
  record Block(Path page, int fenceLine, String name, int firstLine, int endLine, String text) {}

  private Snippets() {}

  /** Every region under {@code sources} but not under {@code skipped}; malformed ones are reported in {@code problems}. */
  static Map<String, Region> regions(Path sources, Path skipped, List<String> problems) {
    Map<String, Region> regions = new LinkedHashMap<>();
    for (Path file : files(sources, ".java")) {
      if (file.startsWith(skipped)) {
        continue;
      }
      List<String> lines = read(file);
      String open = null;
      int openLine = 0;
      List<String> body = new ArrayList<>();
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i);
        Matcher start = START.matcher(line);
        if (start.matches()) {
          if (open != null) {
            problems.add(where(file, i) + ": snippet '" + start.group(1) + "' opens inside '" + open
                + "'; close the first with // end-snippet");
          }
          open = start.group(1);
          openLine = i;
          body.clear();
          if (!NAME.matcher(open).matches()) {
            problems.add(where(file, i) + ": snippet name '" + open + "' must be lower-case words joined by '-'");
          }
        } else if (END.matcher(line).matches()) {
          if (open == null) {
            problems.add(where(file, i) + ": // end-snippet without a // snippet:<name> above it");
          } else {
            Region region = new Region(open, file, openLine + 1, dedent(body));
            Region twin = regions.putIfAbsent(open, region);
            if (twin != null) {
              problems.add(where(file, openLine) + ": snippet '" + open + "' is also defined at "
                  + where(twin.file(), twin.line() - 1));
            }
            open = null;
          }
        } else if (open != null) {
          body.add(line);
        }
      }
      if (open != null) {
        problems.add(where(file, openLine) + ": snippet '" + open + "' is never closed with // end-snippet");
      }
    }
    return regions;
  }

  /** Every fenced {@code java} block of a markdown page; a marker not followed by one is a problem. */
  static List<Block> javaBlocks(Path page, List<String> problems) {
    List<String> lines = read(page);
    List<Block> blocks = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      Matcher marker = MARKER.matcher(line);
      if (marker.matches() && (i + 1 >= lines.size() || !lines.get(i + 1).equals(FENCE + "java"))) {
        problems.add(where(page, i) + ": the snippet marker must stand right above a ```java fence");
      }
      if (!line.startsWith(FENCE)) {
        continue;
      }
      int close = i + 1;
      while (close < lines.size() && !lines.get(close).startsWith(FENCE)) {
        close++;
      }
      if (line.equals(FENCE + "java")) {
        Matcher above = i > 0 ? MARKER.matcher(lines.get(i - 1)) : null;
        String name = above != null && above.matches() ? above.group(1) : null;
        blocks.add(new Block(page, i, name, i + 1, close, String.join("\n", lines.subList(i + 1, close))));
      }
      i = close;
    }
    return blocks;
  }

  /** The page with each quoted block replaced by its region's current text. */
  static void rewrite(Path page, List<Block> blocks, Map<String, Region> regions) {
    List<String> lines = new ArrayList<>(read(page));
    for (int b = blocks.size() - 1; b >= 0; b--) {
      Block block = blocks.get(b);
      Region region = block.name() == null ? null : regions.get(block.name());
      if (region != null) {
        List<String> range = lines.subList(block.firstLine(), block.endLine());
        range.clear();
        range.addAll(List.of(region.text().split("\n", -1)));
      }
    }
    try {
      Files.writeString(page, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The lines joined, with the indentation they all share removed. */
  static String dedent(List<String> lines) {
    int indent = Integer.MAX_VALUE;
    for (String line : lines) {
      if (!line.isBlank()) {
        indent = Math.min(indent, line.length() - line.stripLeading().length());
      }
    }
    List<String> out = new ArrayList<>(lines.size());
    for (String line : lines) {
      out.add(line.isBlank() ? "" : line.substring(indent).stripTrailing());
    }
    return String.join("\n", out);
  }

  static List<Path> files(Path dir, String suffix) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(p -> p.toString().endsWith(suffix) && Files.isRegularFile(p)).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String where(Path file, int zeroBasedLine) {
    return file + ":" + (zeroBasedLine + 1);
  }

  private static List<String> read(Path file) {
    try {
      return Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
