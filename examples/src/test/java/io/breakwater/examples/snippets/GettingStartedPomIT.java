package io.breakwater.examples.snippets;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.examples.snippets.Snippets.Block;
import io.breakwater.examples.snippets.Snippets.Region;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;

/**
 * The {@code pom.xml} of {@code docs/getting-started.md}, as a newcomer would copy it: a fresh project with that file
 * and the example sources the page quotes (with the tests it quotes) is built by Maven, offline, and its tests run.
 *
 * <p>Breakwater's own artifacts come from this build (the parent and BOM poms, and {@code breakwater-core} jarred from
 * its classes) through a local repository of its own under {@code target/}, whose other entries are links to the local
 * repository of this build: nothing is installed into the shared one, and nothing is downloaded.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class GettingStartedPomIT {

  private static final Path MODULE = Path.of("").toAbsolutePath();
  private static final Path ROOT = MODULE.getParent();
  private static final Path PAGE = ROOT.resolve("docs/getting-started.md");
  private static final Path WORK = MODULE.resolve("target/getting-started-project");

  private static String pom;

  @BeforeAll
  static void readThePom() throws IOException {
    Matcher xml = Pattern.compile("```xml\n(<\\?xml.*?</project>)\n```", Pattern.DOTALL).matcher(Files.readString(PAGE));
    assertThat(xml.find()).as("a complete pom.xml in " + PAGE).isTrue();
    pom = xml.group(1);
  }

  private static String version(String groupId, String artifactId) {
    Matcher m = Pattern.compile("<groupId>" + Pattern.quote(groupId) + "</groupId>\\s*<artifactId>"
        + Pattern.quote(artifactId) + "</artifactId>\\s*<version>([^<]+)</version>").matcher(pom);
    assertThat(m.find()).as(groupId + ":" + artifactId + " with a version in the page's pom.xml").isTrue();
    return m.group(1);
  }

  private static String rootProperty(String name) throws IOException {
    Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</").matcher(Files.readString(ROOT.resolve("pom.xml")));
    assertThat(m.find()).as(name + " in the parent pom").isTrue();
    return m.group(1);
  }

  @Test
  void thePomNamesTheVersionsBreakwaterIsBuiltAndTestedWith() throws IOException {
    assertThat(version("io.breakwater", "breakwater-bom")).isEqualTo(projectVersion());
    assertThat(version("io.projectreactor", "reactor-test"))
        .as("reactor-test at the version of the reactor-core that breakwater-core brings")
        .isEqualTo(Flux.class.getPackage().getImplementationVersion());
    assertThat(version("org.junit.jupiter", "junit-jupiter")).isEqualTo(rootProperty("junit-bom.version"));
    assertThat(version("org.slf4j", "slf4j-simple")).as("a binding for the SLF4J API that breakwater-core logs to")
        .isEqualTo(rootProperty("slf4j.version"));
    assertThat(version("org.assertj", "assertj-core")).as("testing.md's snippets use AssertJ")
        .isEqualTo(rootProperty("assertj.version"));
    assertThat(version("org.apache.maven.plugins", "maven-compiler-plugin"))
        .isEqualTo(rootProperty("compiler-plugin.version"));
    assertThat(version("org.apache.maven.plugins", "maven-surefire-plugin")).isEqualTo(rootProperty("surefire.version"));
  }

  @Test
  void aFreshProjectWithThePomAndThePagesCodeBuildsAndItsTestsPass() throws Exception {
    deleteRecursively(WORK);
    Path project = WORK.resolve("project");
    Files.createDirectories(project);
    Files.writeString(project.resolve("pom.xml"), pom);
    List<Path> copied = copyThePagesSources(project);
    Path repository = repositoryWithThisBuildsArtifacts(WORK.resolve("repository"));

    boolean finished;
    Process maven = new ProcessBuilder(mavenExecutable(), "-o", "-B", "-ntp", "-Dmaven.repo.local=" + repository,
        "test")
        .directory(project.toFile())
        .redirectErrorStream(true)
        .redirectOutput(WORK.resolve("build.log").toFile())
        .start();
    try {
      finished = maven.waitFor(8, TimeUnit.MINUTES);
      if (!finished) {
        maven.destroyForcibly().waitFor(1, TimeUnit.MINUTES);
      }
    } finally {
      deleteRecursively(repository);   // the links only: nothing below them is touched, nor left for a later clean
    }
    String log = Files.readString(WORK.resolve("build.log"));

    assertThat(finished).as("Maven finished").isTrue();
    assertThat(maven.exitValue()).as("mvn -o test of the page's pom.xml with " + copied + ":\n" + log).isZero();
    assertThat(log).contains("Tests run: 2, Failures: 0, Errors: 0, Skipped: 0");
  }

  /** The files that hold the regions the page quotes, and the files of their packages that they name. */
  private static List<Path> copyThePagesSources(Path project) throws IOException {
    Map<String, Region> regions = Snippets.regions(MODULE.resolve("src"), MODULE.resolve("src/test/java/io/breakwater/"
        + "examples/snippets"), new ArrayList<>());
    Set<Path> files = new LinkedHashSet<>();
    for (Block block : Snippets.javaBlocks(PAGE, new ArrayList<>())) {
      files.add(regions.get(block.name()).file());
    }
    boolean grown = true;
    while (grown) {
      grown = false;
      for (Path file : List.copyOf(files)) {
        String text = Files.readString(file);
        try (Stream<Path> siblings = Files.list(file.getParent())) {
          for (Path sibling : siblings.toList()) {
            String type = sibling.getFileName().toString().replace(".java", "");
            if (!files.contains(sibling) && Pattern.compile("\\b" + type + "\\b").matcher(text).find()) {
              grown |= files.add(sibling);
            }
          }
        }
      }
    }
    List<Path> copied = new ArrayList<>();
    for (Path file : files) {
      Path relative = MODULE.resolve("src").relativize(file);   // main/java/... or test/java/...
      Path target = project.resolve("src").resolve(relative);
      Files.createDirectories(target.getParent());
      Files.copy(file, target);
      copied.add(relative);
    }
    return copied;
  }

  /**
   * A local repository: a link to every group of this build's local repository, except io.breakwater, which holds
   * this build's parent and BOM poms and breakwater-core (its pom, and a jar of its classes).
   */
  private static Path repositoryWithThisBuildsArtifacts(Path repository) throws IOException {
    Path shared = Path.of(System.getProperty("breakwater.localRepository",
        System.getProperty("user.home") + "/.m2/repository"));
    Files.createDirectories(repository);
    linkEverythingBut(shared, repository, "io");
    linkEverythingBut(shared.resolve("io"), repository.resolve("io"), "breakwater");
    String version = projectVersion();
    Path ours = repository.resolve("io/breakwater");
    publish(ours, "breakwater-parent", version, ROOT.resolve("pom.xml"), null);
    publish(ours, "breakwater-bom", version, ROOT.resolve("bom/pom.xml"), null);
    publish(ours, "breakwater-core", version, ROOT.resolve("core/pom.xml"), ROOT.resolve("core/target/classes"));
    return repository;
  }

  private static void linkEverythingBut(Path from, Path to, String except) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> entries = Files.list(from)) {
      for (Path entry : entries.toList()) {
        if (!entry.getFileName().toString().equals(except)) {
          Files.createSymbolicLink(to.resolve(entry.getFileName().toString()), entry);
        }
      }
    }
  }

  private static void publish(Path group, String artifact, String version, Path pomFile, Path classes)
      throws IOException {
    Path dir = group.resolve(artifact).resolve(version);
    Files.createDirectories(dir);
    Files.copy(pomFile, dir.resolve(artifact + "-" + version + ".pom"));
    if (classes == null) {
      return;
    }
    assertThat(classes.resolve("io/breakwater/Breakwater.class")).as("breakwater-core compiled").exists();
    try (OutputStream out = Files.newOutputStream(dir.resolve(artifact + "-" + version + ".jar"));
        JarOutputStream jar = new JarOutputStream(out);
        Stream<Path> walk = Files.walk(classes)) {
      for (Path file : walk.filter(Files::isRegularFile).sorted().toList()) {
        jar.putNextEntry(new JarEntry(classes.relativize(file).toString().replace('\\', '/')));
        Files.copy(file, jar);
        jar.closeEntry();
      }
    }
  }

  private static String projectVersion() throws IOException {
    Matcher m = Pattern.compile("<artifactId>breakwater-bom</artifactId>\\s*<version>([^<]+)</version>")
        .matcher(Files.readString(ROOT.resolve("bom/pom.xml"), StandardCharsets.UTF_8));
    assertThat(m.find()).isTrue();
    return m.group(1);
  }

  private static String mavenExecutable() {
    String home = System.getProperty("maven.home");
    return home != null && Files.isExecutable(Path.of(home, "bin", "mvn")) ? Path.of(home, "bin", "mvn").toString()
        : "mvn";
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {   // links are not followed: only the links themselves go
      for (Path p : walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
        Files.delete(p);
      }
    }
  }
}
