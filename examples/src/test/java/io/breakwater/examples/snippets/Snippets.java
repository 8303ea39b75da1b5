package io.breakwater.examples.snippets;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The docs' code snippets and the example sources they quote.
 *
 * <p>In an example's Java source, a quoted region sits between {@code // snippet:<name>} and {@code // end-snippet},
 * each on its own line. In markdown, a fenced {@code java} block quotes it when the line right above the fence is
 * {@code <!-- snippet: <name> -->}; the block holds the region with its common indentation removed. With
 * {@code <!-- snippet: <name> with-imports -->} the block starts with the imports of the region's source file that the
 * region uses in its code, comments aside (a class's static members when the region calls one of them unqualified;
 * never the examples' own domain types), so that a reader can compile what they copy.
 */
final class Snippets {

  private static final Pattern START = Pattern.compile("^\\s*// snippet:(\\S*)\\s*$");
  private static final Pattern END = Pattern.compile("^\\s*// end-snippet\\s*$");
  private static final Pattern MARKER = Pattern.compile("^<!-- snippet: (\\S+)( with-imports)? -->$");
  private static final Pattern IMPORT = Pattern.compile("^import (static )?([\\w.]+)(\\.\\*)?;$");
  private static final Pattern NAME = Pattern.compile("[a-z0-9]+(-[a-z0-9]+)*");
  private static final String FENCE = "```";
  private static final String EXAMPLES_PACKAGE = "io.breakwater.examples.";
  private static final Pattern COMMENT = Pattern.compile("//[^\\n]*|/\\*.*?\\*/", Pattern.DOTALL);

  /** A named region of an example source, with the import lines of its file. */
  record Region(String name, Path file, int line, String text, List<String> fileImports) {

    Region(String name, Path file, int line, String text) {
      this(name, file, line, text, List.of());
    }

    /**
     * The static imports of the file that the region uses, then the other ones, each group ended by a blank line, then
     * the region.
     */
    String textWithImports() {
      StringBuilder out = new StringBuilder();
      for (boolean statics : new boolean[] {true, false}) {
        List<String> used = fileImports.stream()
            .filter(l -> l.startsWith("import static ") == statics)
            .filter(this::uses)
            .toList();
        if (!used.isEmpty()) {
          out.append(String.join("\n", used)).append("\n\n");
        }
      }
      return out + text;
    }

    private boolean uses(String importLine) {
      String code = COMMENT.matcher(text).replaceAll(" ");   // a name in a comment needs no import
      Matcher m = IMPORT.matcher(importLine);
      if (!m.matches()) {
        return true;
      }
      String imported = m.group(2);
      if (imported.startsWith(EXAMPLES_PACKAGE)) {
        return false;   // the examples' own domain types: a reader has their own
      }
      if (m.group(3) != null) {
        // a whole class's static members: used when the region calls one unqualified; a whole package: always
        return m.group(1) == null || staticMembers(imported).stream().anyMatch(member -> Pattern
            .compile("(?<![\\w.])" + Pattern.quote(member) + "\\b").matcher(code).find());
      }
      String name = imported.substring(imported.lastIndexOf('.') + 1);
      return Pattern.compile("(?<![\\w.])" + Pattern.quote(name) + "\\b").matcher(code).find();
    }

    /** The public static methods and fields of a class on the class path (all of them are candidates). */
    private static Set<String> staticMembers(String className) {
      try {
        Class<?> type = Class.forName(className, false, Snippets.class.getClassLoader());
        Set<String> names = new HashSet<>();
        for (Method method : type.getMethods()) {
          if (Modifier.isStatic(method.getModifiers())) {
            names.add(method.getName());
          }
        }
        for (Field field : type.getFields()) {
          if (Modifier.isStatic(field.getModifiers())) {
            names.add(field.getName());
          }
        }
        return names;
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException("import static " + className + ".* names a class that is not on the class "
            + "path of the examples' tests", e);
      }
    }

    /** The text a block quoting this region must hold. */
    String quotedText(boolean withImports) {
      return withImports ? textWithImports() : text;
    }
  }

  /**
   * A fenced {@code java} block in a markdown page: its marker's name (or null), whether it shows the imports, and its
   * lines' range.
   */
  record Block(Path page, int fenceLine, String name, boolean withImports, int firstLine, int endLine, String text) {}

  /**
   * The example modules beside {@code examples} whose regions the pages quote too: each keeps Spring Boot's dependency
   * management out of this module, so their blocks are compiled by their own builds.
   */
  static final List<String> BOOT_EXAMPLE_MODULES = List.of("examples-spring-boot", "examples-spring-ai");

  private Snippets() {}

  /** Every region under {@code sources} but not under {@code skipped}; malformed ones are reported in {@code problems}. */
  static Map<String, Region> regions(Path sources, Path skipped, List<String> problems) {
    Map<String, Region> regions = new LinkedHashMap<>();
    for (Path file : files(sources, ".java")) {
      if (file.startsWith(skipped)) {
        continue;
      }
      List<String> lines = read(file);
      List<String> imports = lines.stream().map(String::strip).filter(l -> l.startsWith("import ")).toList();
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
            Region region = new Region(open, file, openLine + 1, dedent(body), imports);
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
        boolean marked = above != null && above.matches();
        blocks.add(new Block(page, i, marked ? above.group(1) : null, marked && above.group(2) != null, i + 1, close,
            String.join("\n", lines.subList(i + 1, close))));
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
        range.addAll(List.of(region.quotedText(block.withImports()).split("\n", -1)));
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
