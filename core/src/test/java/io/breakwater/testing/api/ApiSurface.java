package io.breakwater.testing.api;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The public API of one module, listed as text and compared with a file committed beside the module's pom
 * ({@code api/<artifact>.api}), so that any change to the public surface — an addition as much as a removal — is a
 * visible diff in review.
 *
 * <p>The API is every public type outside {@code io.breakwater.internal} (nested ones when every enclosing type is
 * public) with its public and protected constructors, methods and fields, written with their generic signatures.
 * Types are sorted by name and members by their text, so the file changes only when the API does.
 *
 * <p>To accept a change, regenerate the file and commit it with the change:
 *
 * <pre>{@code
 * mvn -B -ntp test -Dtest=ApiSurfaceTest -Dsurefire.failIfNoSpecifiedTests=false -Dbreakwater.api.update=true
 * }</pre>
 *
 * <p>rewrites the file of every library module at once (core, redis-store, spring-webflux, spring-boot-starter);
 * {@code -pl <module> -am} limits it to one.
 */
public final class ApiSurface {

  /** The system property that rewrites the committed file instead of comparing with it. */
  public static final String UPDATE = "breakwater.api.update";

  /** The one command that rewrites the API file of every library module (run from the project's root). */
  public static final String REGENERATE_ALL =
      "mvn -B -ntp test -Dtest=ApiSurfaceTest -Dsurefire.failIfNoSpecifiedTests=false -D" + UPDATE + "=true";

  private static final String INTERNAL = "io.breakwater.internal";

  private ApiSurface() {}

  /**
   * Fails, with the lines added and removed and the command that regenerates the file, unless the public API of the
   * classes beside {@code anchor} is the one listed in {@code api/<artifact>.api}; rewrites the file instead when
   * {@value #UPDATE} is {@code true}.
   *
   * @param anchor any class of the module's main code
   * @param artifact the module's artifact id, which names the file
   * @param module the module's directory, for the command in the failure message
   */
  public static void assertUnchanged(Class<?> anchor, String artifact, String module) {
    Path file = Path.of("api", artifact + ".api");
    List<String> actual = describe(anchor);
    try {
      if (Boolean.getBoolean(UPDATE)) {
        Files.createDirectories(file.getParent());
        Files.write(file, actual, StandardCharsets.UTF_8);
        return;
      }
      List<String> committed = Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of();
      String diff = diff(committed, actual);
      if (!diff.isEmpty()) {
        fail("The public API of " + artifact + " differs from " + module + "/" + file + ":\n" + diff
            + "\nIf the change is intended, regenerate the file and commit it with your change:\n"
            + "  " + REGENERATE_ALL + "\n"
            + "(every library module at once, from the project's root; only this one: add -pl " + module + " -am)\n"
            + "If it is not, make the addition package-private or move it to " + INTERNAL + ".");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The lines of the API file for the module whose main classes hold {@code anchor}. */
  public static List<String> describe(Class<?> anchor) {
    TreeMap<String, List<String>> types = new TreeMap<>();
    for (String name : classNames(anchor)) {
      Class<?> type;
      try {
        type = Class.forName(name, false, anchor.getClassLoader());
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException("cannot load " + name, e);
      }
      if (isPublicApi(type)) {
        types.put(type.getName(), typeLines(type));
      }
    }
    List<String> lines = new ArrayList<>();
    types.values().forEach(lines::addAll);
    return lines;
  }

  private static boolean isPublicApi(Class<?> type) {
    if (type.isSynthetic() || type.isAnonymousClass() || type.isLocalClass()
        || type.getPackageName().startsWith(INTERNAL)) {
      return false;
    }
    for (Class<?> t = type; t != null; t = t.getEnclosingClass()) {
      if (!Modifier.isPublic(t.getModifiers())) {
        return false;
      }
    }
    return true;
  }

  /**
   * The type's header and members as a user sees them. A superclass that is not API (package-private, or in
   * {@code io.breakwater.internal}) is folded into the type, as javadoc shows it: the header names the nearest API
   * superclass and every interface, and the public members the type inherits from the folded classes are listed as
   * its own. So an implementation base class can change without changing the API, and the API still shows that the
   * type is, say, a {@code TimeoutException} with a {@code source()}.
   */
  private static List<String> typeLines(Class<?> type) {
    List<Class<?>> folded = new ArrayList<>();
    Type superclass = type.getGenericSuperclass();
    while (superclass instanceof Class<?> c && c.getName().startsWith("io.breakwater.") && !isPublicApi(c)) {
      folded.add(c);
      superclass = c.getGenericSuperclass();
    }
    StringBuilder header = new StringBuilder(type.toGenericString());
    if (superclass != null && superclass != Object.class && !type.isEnum() && !type.isRecord()) {
      header.append(" extends ").append(superclass.getTypeName());
    }
    Set<String> interfaces = new LinkedHashSet<>();
    Stream.concat(Stream.of(type), folded.stream())
        .forEach(c -> Arrays.stream(c.getGenericInterfaces()).forEach(i -> interfaces.add(i.getTypeName())));
    if (!interfaces.isEmpty()) {
      header.append(type.isInterface() ? " extends " : " implements ").append(String.join(", ", interfaces));
    }
    if (type.isSealed()) {
      header.append(" permits ").append(Arrays.stream(type.getPermittedSubclasses()).map(Class::getName)
          .sorted().collect(Collectors.joining(", ")));
    }
    List<String> members = new ArrayList<>();
    for (Constructor<?> c : type.getDeclaredConstructors()) {
      if (isVisible(c, type) && !c.isSynthetic()) {
        members.add(c.toGenericString());
      }
    }
    Set<String> signatures = new LinkedHashSet<>();
    for (Class<?> owner : Stream.concat(Stream.of(type), folded.stream()).toList()) {
      for (Method m : owner.getDeclaredMethods()) {
        if (isVisible(m, type) && !m.isSynthetic() && !m.isBridge()
            && signatures.add(m.getName() + Arrays.toString(m.getParameterTypes()))) {
          members.add(asMemberOf(m.toGenericString(), owner, m.getName() + "(", type));
        }
      }
      for (Field f : owner.getDeclaredFields()) {
        if (isVisible(f, type) && !f.isSynthetic() && signatures.add(f.getName())) {
          members.add(asMemberOf(f.toGenericString(), owner, f.getName(), type));
        }
      }
    }
    members.sort(null);
    List<String> lines = new ArrayList<>(members.size() + 1);
    lines.add(header.toString());
    members.forEach(m -> lines.add("  " + m));
    return lines;
  }

  /** A member's text with its owner's name (a folded superclass's) replaced by the type's. */
  private static String asMemberOf(String text, Class<?> owner, String name, Class<?> type) {
    return owner == type ? text : text.replace(owner.getTypeName() + "." + name, type.getTypeName() + "." + name);
  }

  /** Whether {@code member}, declared by {@code type} or a superclass folded into it, is part of its API. */
  private static boolean isVisible(Member member, Class<?> type) {
    int modifiers = member.getModifiers();
    if (Modifier.isPublic(modifiers)) {
      return true;
    }
    // Protected members are API only where a user can subclass.
    boolean extensible = !Modifier.isFinal(type.getModifiers()) && !type.isSealed() && !type.isEnum()
        && !type.isRecord() && (!(member instanceof Executable) || hasVisibleConstructor(type));
    return Modifier.isProtected(modifiers) && extensible;
  }

  private static boolean hasVisibleConstructor(Class<?> owner) {
    return owner.isInterface() || Arrays.stream(owner.getDeclaredConstructors())
        .anyMatch(c -> Modifier.isPublic(c.getModifiers()) || Modifier.isProtected(c.getModifiers()));
  }

  private static List<String> classNames(Class<?> anchor) {
    Path root;
    try {
      root = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    try {
      if (Files.isDirectory(root)) {
        return classNames(root);
      }
      try (FileSystem jar = FileSystems.newFileSystem(root)) {
        return classNames(jar.getPath("/"));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<String> classNames(Path root) throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      return files.map(p -> root.relativize(p).toString().replace('\\', '/'))
          .filter(p -> p.endsWith(".class") && !p.endsWith("module-info.class") && !p.endsWith("package-info.class"))
          .map(p -> p.substring(0, p.length() - ".class".length()).replace('/', '.'))
          .sorted()
          .collect(Collectors.toList());
    }
  }

  /** The members added and removed, each line naming its type; empty when the two lists agree. */
  private static String diff(List<String> committed, List<String> actual) {
    Set<String> before = qualified(committed);
    Set<String> after = qualified(actual);
    StringBuilder out = new StringBuilder();
    before.stream().filter(l -> !after.contains(l)).forEach(l -> out.append("  - ").append(l).append('\n'));
    after.stream().filter(l -> !before.contains(l)).forEach(l -> out.append("  + ").append(l).append('\n'));
    return out.toString();
  }

  /** The type's name in its header line, so that a changed header does not show every member as changed. */
  private static String typeName(String header) {
    for (String word : header.split(" ")) {
      if (word.startsWith("io.breakwater.")) {
        int generics = word.indexOf('<');
        return generics < 0 ? word : word.substring(0, generics);
      }
    }
    return header;
  }

  private static Set<String> qualified(List<String> lines) {
    Set<String> out = new LinkedHashSet<>();
    String type = "";
    for (String line : lines) {
      if (line.startsWith("  ")) {
        out.add(type + " :: " + line.strip());
      } else if (!line.isBlank()) {
        type = typeName(line);
        out.add(line);
      }
    }
    return out;
  }
}
