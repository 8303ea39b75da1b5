package io.breakwater.examples.snippets;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.source.util.JavacTask;
import io.breakwater.examples.snippets.Snippets.Block;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A newcomer copies a block from the docs into their own project and compiles it, with nothing but what the docs show:
 * the block's imports as printed and the shared domain types of {@code docs/domain.md}. This test does the same with
 * every {@code java} block of the README and {@code docs/}, in one compiler call against the examples' test class path.
 *
 * <p>Each block becomes one compilation unit, in one package per page, importing the domain page's types
 * ({@code import static docs.domain.Domain3.*;} and the like, as a reader who nests them in a class would). A block
 * that is whole classes stays top-level, so that the page's other blocks can use them, as in a reader's project (the
 * cookbook's recipes); a block of members (methods, fields, nested types) is wrapped in a class; a block of statements
 * in a {@code void run() throws Exception} method of a class. The shape is the first that parses. A block quoted from
 * {@code examples-spring-boot} or {@code examples-spring-ai} needs the Spring Boot starter, which is not on this
 * module's class path: it is left to that module's build (spring-boot.md quotes one whole class there, its imports
 * included).
 *
 * <p>Before this test, a held-out newcomer compiled few blocks as copied; on those docs it reports 210 errors in 62 of
 * the 75 blocks (variables the page never declares, domain types no page shows, members of example classes).
 */
class DocBlocksCompileTest {

  private static final Path MODULE = Path.of("").toAbsolutePath();
  private static final Path ROOT = MODULE.getParent();
  static final String DOMAIN_PAGE = "domain.md";
  private static final String DOMAIN_PACKAGE = "docs.domain";

  @Test
  void everyBlockCompilesAsTheDocPrintsIt() {
    List<Path> pages = new ArrayList<>(Snippets.files(ROOT.resolve("docs"), ".md"));
    pages.add(ROOT.resolve("README.md"));
    Map<String, Snippets.Region> bootRegions = new HashMap<>();
    for (String module : Snippets.BOOT_EXAMPLE_MODULES) {
      bootRegions.putAll(Snippets.regions(ROOT.resolve(module + "/src"), ROOT.resolve("none"), new ArrayList<>()));
    }
    List<Block> blocks = new ArrayList<>();
    for (Path page : pages) {
      Snippets.javaBlocks(page, new ArrayList<>()).stream()
          .filter(b -> b.name() == null || !bootRegions.containsKey(b.name()))
          .forEach(blocks::add);
    }
    assertThat(blocks).as("java blocks under " + ROOT).hasSizeGreaterThan(20);

    List<String> errors = BlockCompiler.compile(blocks, Path.of(DOMAIN_PAGE), DOMAIN_PACKAGE);

    assertThat(errors).as("blocks that do not compile as the docs print them (%d)", errors.size()).isEmpty();
  }

  @Test
  void aBlockIsReportedWithItsPageLineAndErrorAndDomainTypesAndAPagesClassesAreThereForTheOthers(@TempDir Path dir)
      throws IOException {
    Path domain = Files.writeString(dir.resolve(DOMAIN_PAGE), """
        <!-- snippet: types -->
        ```java
        public record Query(String from) {}
        ```
        """);
    Path page = Files.writeString(dir.resolve("page.md"), """
        <!-- snippet: a-class -->
        ```java
        import java.util.List;

        public final class Trips {
          public static List<Query> of(Query query) {
            return List.of(query);
          }
        }
        ```
        <!-- snippet: statements -->
        ```java
        var trips = Trips.of(new Query("LYS"));
        ```
        <!-- snippet: undeclared -->
        ```java
        import java.time.Duration;

        Duration d = Duration.ofSeconds(1);
        client.search(query);
        ```
        """);
    List<Block> blocks = new ArrayList<>(Snippets.javaBlocks(domain, new ArrayList<>()));
    blocks.addAll(Snippets.javaBlocks(page, new ArrayList<>()));

    List<String> errors = BlockCompiler.compile(blocks, Path.of(DOMAIN_PAGE), DOMAIN_PACKAGE);

    assertThat(errors).hasSize(2).allMatch(e -> e.contains("page.md:20 (snippet undeclared): cannot find symbol"));
    assertThat(String.join("\n", errors)).contains("variable client").contains("variable query");
  }

  /** Turns doc blocks into compilation units and compiles them together. */
  static final class BlockCompiler {

    private enum Shape { TYPES, MEMBERS, STATEMENTS }

    private static final Pattern STATIC_TYPE = Pattern.compile("(?m)^(?:\\w+\\s+)*static\\s+(?:\\w+\\s+)*"
        + "(?:class|record|interface|enum)\\s");

    private static final List<String> OPTIONS = List.of("--release", "17", "-proc:none", "-Xmaxerrs", "100000");

    private BlockCompiler() {}

    /** The compiler's errors, each naming the page, its line, the block's snippet and the message. */
    static List<String> compile(List<Block> blocks, Path domainPage, String domainPackage) {
      JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
      List<Block> domain = blocks.stream().filter(b -> b.page().getFileName().equals(domainPage)).toList();
      Map<Block, Shape> shapes = new HashMap<>();
      for (Shape shape : Shape.values()) {
        List<Block> undecided = blocks.stream().filter(b -> !shapes.containsKey(b))
            // the domain page's types are nested in a class; so is a block of static nested types
            .filter(b -> shape != Shape.TYPES || !domain.contains(b) && !STATIC_TYPE.matcher(b.text()).find())
            .toList();
        if (shape == Shape.STATEMENTS) {
          undecided.forEach(b -> shapes.put(b, Shape.STATEMENTS));
          break;
        }
        List<Unit> candidates = new ArrayList<>();
        for (int i = 0; i < undecided.size(); i++) {
          candidates.add(Unit.of(undecided.get(i), shape, "p" + i, "class Block", ""));
        }
        DiagnosticCollector<JavaFileObject> parse = new DiagnosticCollector<>();
        try {
          ((JavacTask) compiler.getTask(null, null, parse, OPTIONS, null, candidates)).parse();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        for (Unit unit : candidates) {
          boolean parses = parse.getDiagnostics().stream()
              .noneMatch(d -> d.getKind() == Diagnostic.Kind.ERROR && d.getSource() == unit);
          if (parses) {
            shapes.put(unit.block, shape);
          }
        }
      }

      String sharedImports = sharedImports(domain, shapes, domainPackage, blocks);
      List<Unit> units = new ArrayList<>();
      for (int i = 0; i < blocks.size(); i++) {
        Block block = blocks.get(i);
        boolean isDomain = domain.contains(block);
        units.add(Unit.of(block, shapes.get(block), isDomain ? domainPackage : packageOf(block.page()),
            (isDomain ? "public class Domain" : "class Block") + i, sharedImports));
      }
      DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
      String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
      try (StandardJavaFileManager files = compiler.getStandardFileManager(null, Locale.ROOT, null)) {
        List<String> options = new ArrayList<>(OPTIONS);
        options.addAll(List.of("-classpath", classPath, "-nowarn"));
        ((JavacTask) compiler.getTask(null, files, diagnostics, options, null, units)).analyze();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      List<String> errors = new ArrayList<>();
      for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
        if (d.getKind() != Diagnostic.Kind.ERROR) {
          continue;
        }
        if (!(d.getSource() instanceof Unit unit)) {
          errors.add(d.getMessage(Locale.ROOT));
          continue;
        }
        errors.add(unit.where(d.getLineNumber()) + ": " + String.join("; ", d.getMessage(Locale.ROOT).lines()
            .map(String::strip).filter(l -> !l.startsWith("location:")).toList()));
      }
      return errors;
    }

    /** The domain page's types, for every block: {@code import static docs.domain.Domain3.*;} and the like. */
    private static String sharedImports(List<Block> domain, Map<Block, Shape> shapes, String domainPackage,
        List<Block> blocks) {
      List<String> imports = new ArrayList<>();
      for (Block block : domain) {
        List<String> types = shapes.get(block) == Shape.TYPES ? topLevelTypes(body(block.text()))
            : List.of("Domain" + blocks.indexOf(block));
        for (String type : types) {
          imports.add("import " + domainPackage + "." + type + "; import static " + domainPackage + "." + type + ".*;");
        }
      }
      return String.join(" ", imports);
    }

    /** One package per page: a class a page shows whole is there for its other blocks, as in a reader's project. */
    private static String packageOf(Path page) {
      return "docs." + page.getFileName().toString().replaceAll("\\.md$", "").replaceAll("\\W", "_");
    }

    /** The block without its import lines. */
    private static List<String> body(String text) {
      return text.lines().filter(l -> !l.startsWith("import ")).toList();
    }

    /** The names of the types a block of top-level declarations declares (its lines at column 0). */
    private static List<String> topLevelTypes(List<String> lines) {
      List<String> names = new ArrayList<>();
      Pattern declaration = Pattern.compile(
          "^(?:(?:public|final|abstract|sealed|non-sealed|static)\\s+)*(?:class|record|interface|enum)\\s+(\\w+).*");
      for (String line : lines) {
        Matcher m = declaration.matcher(line);
        if (m.matches()) {
          names.add(m.group(1));
        }
      }
      return names;
    }

    /** One block as a compilation unit, with the page line of each of its lines. */
    private static final class Unit extends SimpleJavaFileObject {

      final Block block;
      private final String source;
      private final List<Integer> pageLines;

      private Unit(Block block, String uri, String source, List<Integer> pageLines) {
        super(URI.create("string:///" + uri), Kind.SOURCE);
        this.block = block;
        this.source = source;
        this.pageLines = pageLines;
      }

      static Unit of(Block block, Shape shape, String pkg, String wrapper, String sharedImports) {
        List<String> lines = block.text().lines().toList();
        StringBuilder out = new StringBuilder();
        List<Integer> pageLines = new ArrayList<>();
        BiConsumer<String, Integer> line = (text, pageLine) -> {
          out.append(text).append('\n');
          pageLines.add(pageLine);
        };
        line.accept("package " + pkg + "; " + sharedImports, block.firstLine());
        for (int i = 0; i < lines.size(); i++) {
          if (lines.get(i).startsWith("import ")) {
            line.accept(lines.get(i), block.firstLine() + i + 1);
          }
        }
        String fileName = wrapper.substring(wrapper.lastIndexOf(' ') + 1);
        if (shape == Shape.TYPES) {
          List<String> declared = topLevelTypes(body(block.text()));
          fileName = block.text().lines().filter(l -> l.startsWith("public "))
              .flatMap(l -> topLevelTypes(List.of(l)).stream()).findFirst()
              .orElse(declared.isEmpty() ? fileName : declared.get(0));
        } else if (shape == Shape.MEMBERS) {
          line.accept(wrapper + " {", block.firstLine());
        } else {
          line.accept(wrapper + " { void run() throws Exception {", block.firstLine());
        }
        for (int i = 0; i < lines.size(); i++) {
          if (!lines.get(i).startsWith("import ")) {
            line.accept(lines.get(i), block.firstLine() + i + 1);
          }
        }
        line.accept(shape == Shape.TYPES ? "" : shape == Shape.MEMBERS ? "}" : "}}", block.endLine());
        return new Unit(block, pkg.replace('.', '/') + "/" + fileName + ".java", out.toString(), pageLines);
      }

      String where(long unitLine) {
        int index = (int) Math.max(0, Math.min(unitLine - 1, pageLines.size() - 1));
        Path page = block.page().startsWith(ROOT) ? ROOT.relativize(block.page()) : block.page().getFileName();
        return page + ":" + pageLines.get(index) + " (snippet "
            + (block.name() == null ? "without a name" : block.name()) + ")";
      }

      @Override
      public CharSequence getCharContent(boolean ignoreEncodingErrors) {
        return source;
      }
    }
  }
}
