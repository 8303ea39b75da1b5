package io.breakwater.redis.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real {@code redis-server} started by a test on a free loopback port, without persistence, so that the test can
 * kill it ({@code kill -9}), pause it ({@code SIGSTOP}) and restart it. It never uses a server that happens to be
 * running.
 *
 * <p>The binary is {@code redis-server} from the PATH, or else the one bundled in the {@code embedded-redis} test
 * dependency.
 */
public final class RedisProcess implements AutoCloseable {

  private final Path workDir;
  private final List<String> extraArgs;
  private final int port;
  private Process process;

  private RedisProcess(Path workDir, int port, List<String> extraArgs) {
    this.workDir = workDir;
    this.port = port;
    this.extraArgs = extraArgs;
  }

  /** A standalone server on a free port, started and answering PING. */
  public static RedisProcess start(String... extraArgs) {
    try {
      RedisProcess redis = new RedisProcess(Files.createTempDirectory("breakwater-redis"), freePort(),
          List.of(extraArgs));
      redis.launch();
      return redis;
    } catch (IOException e) {
      throw new IllegalStateException("Could not start redis-server", e);
    }
  }

  public int port() {
    return port;
  }

  public String address() {
    return "redis://127.0.0.1:" + port;
  }

  public long pid() {
    return process.pid();
  }

  private void launch() throws IOException {
    List<String> command = new ArrayList<>(List.of(binary().toString(),
        "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--dir", workDir.toString(), "--protected-mode", "no"));
    command.addAll(extraArgs);
    process = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(workDir.resolve("redis.log").toFile())
        .start();
    awaitPing(Duration.ofSeconds(10));
  }

  /** {@code kill -9}: the server dies at once, losing everything (no persistence). */
  public void kill() {
    process.destroyForcibly();
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Starts the server again on the same port, empty. */
  public void restart() {
    try {
      launch();
    } catch (IOException e) {
      throw new IllegalStateException("Could not restart redis-server", e);
    }
  }

  /** {@code SIGSTOP}: the server stops answering but keeps its connections open. */
  public void pause() {
    signal("STOP");
  }

  /** {@code SIGCONT}: the paused server answers again. */
  public void resume() {
    signal("CONT");
  }

  private void signal(String name) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
      if (kill.waitFor() != 0) {
        throw new IllegalStateException("kill -" + name + " failed");
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sends one command and returns the raw reply (for set-up and assertions, not for the code under test). */
  public String command(String... args) {
    return Resp.command(port, args);
  }

  private void awaitPing(Duration timeout) {
    long until = System.nanoTime() + timeout.toNanos();
    IOException last = null;
    while (System.nanoTime() < until) {
      if (!process.isAlive()) {
        throw new IllegalStateException("redis-server exited at start: " + log());
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        if (Resp.command(port, "PING").contains("PONG")) {
          return;
        }
      } catch (IOException | IllegalStateException e) {
        last = e instanceof IOException io ? io : new IOException(e);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    throw new IllegalStateException("redis-server did not answer PING on port " + port + ": " + log(), last);
  }

  private String log() {
    try {
      return Files.readString(workDir.resolve("redis.log"));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  @Override
  public void close() {
    if (process != null && process.isAlive()) {
      resume();
      kill();
    }
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }

  private static Path binary;

  /** {@code redis-server} on the PATH, else the binary bundled in embedded-redis, extracted once. */
  public static synchronized Path binary() throws IOException {
    if (binary != null) {
      return binary;
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      Path candidate = Path.of(dir, "redis-server");
      if (Files.isExecutable(candidate)) {
        return binary = candidate;
      }
    }
    String arch = System.getProperty("os.arch").contains("aarch64") ? "redis-server-6.2.7-linux-arm64"
        : "redis-server-6.2.6-v5-linux-amd64";
    try (InputStream bundled = RedisProcess.class.getResourceAsStream("/" + arch)) {
      if (bundled == null) {
        throw new IllegalStateException("No redis-server on the PATH and no bundled " + arch
            + ": install redis-server (apt-get install -y redis-server)");
      }
      Path extracted = Files.createTempFile("redis-server", "");
      Files.copy(bundled, extracted, StandardCopyOption.REPLACE_EXISTING);
      Files.setPosixFilePermissions(extracted, PosixFilePermissions.fromString("rwx------"));
      extracted.toFile().deleteOnExit();
      return binary = extracted;
    }
  }
}
