package io.breakwater.examples.snippets;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnippetsTest {

  @TempDir
  Path dir;

  @Test
  void aRegionIsDedentedAndAQuotedBlockIsRewrittenFromIt() throws IOException {
    Files.writeString(dir.resolve("A.java"), """
        class A {
          void a() {
            // snippet:one
            int x = 1;

              x++;
            // end-snippet
          }
        }
        """);
    Path page = Files.writeString(dir.resolve("page.md"), """
        text
        <!-- snippet: one -->
        ```java
        stale
        ```
        ```java
        unquoted
        ```
        """);
    List<String> problems = new ArrayList<>();

    var regions = Snippets.regions(dir, dir.resolve("skipped"), problems);
    var blocks = Snippets.javaBlocks(page, problems);
    Snippets.rewrite(page, blocks, regions);

    assertThat(problems).isEmpty();
    assertThat(regions.get("one").text()).isEqualTo("int x = 1;\n\n  x++;");
    assertThat(blocks).extracting(Snippets.Block::name).containsExactly("one", null);
    assertThat(Files.readString(page)).contains("```java\nint x = 1;\n\n  x++;\n```").contains("unquoted");
  }

  @Test
  void aBlockWithImportsStartsWithTheImportsItsRegionUses() throws IOException {
    Files.writeString(dir.resolve("C.java"), """
        package c;

        import static io.breakwater.Breakwater.*;
        import static org.assertj.core.api.Assertions.assertThat;

        import io.breakwater.examples.guide.Domain.Order;
        import java.time.Duration;
        import java.util.List;
        import java.util.Map.Entry;
        import reactor.core.publisher.Mono;

        class C {
          void c() {
            // snippet:two
            Mono<String> m = Mono.just("x").transformDeferred(withDeadline(Duration.ofSeconds(1)));
            Order order = null;   // not a List, nor an Entry
            // end-snippet
            // snippet:three
            int none = assertThat(1).actual();
            // end-snippet
          }
        }
        """);
    Path page = Files.writeString(dir.resolve("page.md"), """
        <!-- snippet: two with-imports -->
        ```java
        ```
        <!-- snippet: three with-imports -->
        ```java
        ```
        """);
    List<String> problems = new ArrayList<>();

    var regions = Snippets.regions(dir, dir.resolve("skipped"), problems);
    var blocks = Snippets.javaBlocks(page, problems);
    Snippets.rewrite(page, blocks, regions);

    assertThat(problems).isEmpty();
    assertThat(blocks).extracting(Snippets.Block::withImports).containsExactly(true, true);
    assertThat(regions.get("two").textWithImports()).isEqualTo("""
        import static io.breakwater.Breakwater.*;

        import java.time.Duration;
        import reactor.core.publisher.Mono;

        Mono<String> m = Mono.just("x").transformDeferred(withDeadline(Duration.ofSeconds(1)));
        Order order = null;   // not a List, nor an Entry""");
    assertThat(regions.get("three").textWithImports()).isEqualTo("""
        import static org.assertj.core.api.Assertions.assertThat;

        int none = assertThat(1).actual();""");
    assertThat(Files.readString(page)).contains("```java\nimport static io.breakwater.Breakwater.*;\n\nimport java");
  }

  @Test
  void nestedUnclosedDuplicateAndMisplacedMarkersAreReported() throws IOException {
    Files.writeString(dir.resolve("B.java"), """
        // snippet:a
        // snippet:b
        // end-snippet
        // snippet:b
        // end-snippet
        // end-snippet
        // snippet:Bad_Name
        """);
    Path page = Files.writeString(dir.resolve("page.md"), "<!-- snippet: a -->\n\n```java\n```\n");
    List<String> problems = new ArrayList<>();

    Snippets.regions(dir, dir.resolve("skipped"), problems);
    Snippets.javaBlocks(page, problems);

    assertThat(String.join("\n", problems))
        .contains("opens inside 'a'")
        .contains("'b' is also defined")
        .contains("without a // snippet:<name> above it")
        .contains("'Bad_Name' must be lower-case")
        .contains("never closed")
        .contains("must stand right above a ```java fence");
  }
}
