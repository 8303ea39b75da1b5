package io.breakwater.boot;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * How much the starter adds to an application's start-up: a WebFlux + Actuator application started and closed again
 * and again, alternately with Breakwater's auto-configuration excluded (the baseline) and included with three
 * configured tools, breakers and retry policies, in the same JVM. Each start is timed from {@code run} to a refreshed
 * context with Netty listening, in wall time and in the main thread's CPU time (start-up runs on the main thread; its
 * CPU time does not count the waits for a core that other processes cause on a shared machine). After warm-up starts
 * of both, it prints the median and the 90th percentile of each, and their difference. Not a test: it measures, it
 * asserts nothing.
 *
 * <pre>
 * mvn -B -q -pl spring-boot-starter -am test-compile dependency:build-classpath -Dmdep.includeScope=test \
 *     -Dmdep.outputFile=target/test-classpath.txt
 * java -cp spring-boot-starter/target/test-classes:spring-boot-starter/target/classes:$(cat \
 *     spring-boot-starter/target/test-classpath.txt) io.breakwater.boot.StartupCost 20 60
 * </pre>
 */
public final class StartupCost {

  /** A WebFlux application with every auto-configuration on the class path, and nothing of its own. */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {}

  private static final String[] COMMON = {"server.port=0", "spring.main.banner-mode=off",
      "logging.level.root=warn", "management.endpoints.web.exposure.include=health,breakwater"};

  private static final String[] WITHOUT = {"spring.autoconfigure.exclude="
      + "io.breakwater.internal.boot.BreakwaterRedisAutoConfiguration,"
      + "io.breakwater.internal.boot.BreakwaterAutoConfiguration,"
      + "io.breakwater.internal.boot.BreakwaterWebFluxAutoConfiguration,"
      + "io.breakwater.internal.boot.BreakwaterActuatorAutoConfiguration"};

  private static final String[] WITH = {
      "breakwater.breakers.defaults.minimum-calls=10",
      "breakwater.breakers.instances[flights.search].failure-rate-threshold=0.3",
      "breakwater.breakers.families.flights.open-duration=45s",
      "breakwater.retry.policies.flights.max-retries=2",
      "breakwater.retry.policies.weather.backoff.type=fixed",
      "breakwater.retry.budgets.flights.ratio=0.2",
      "breakwater.tools[flights.search].side-effect=read-only",
      "breakwater.tools[flights.search].retry=flights",
      "breakwater.tools[weather.forecast].side-effect=read-only",
      "breakwater.tools[weather.forecast].timeouts.fixed=2s",
      "breakwater.tools[flights.book].side-effect=non-idempotent-write",
      "breakwater.tools[flights.book].idempotency=true"};

  private StartupCost() {}

  public static void main(String[] args) {
    int warmUp = args.length > 0 ? Integer.parseInt(args[0]) : 20;
    int runs = args.length > 1 ? Integer.parseInt(args[1]) : 60;
    List<long[]> without = new ArrayList<>();
    List<long[]> with = new ArrayList<>();
    for (int i = 0; i < warmUp + runs; i++) {
      long[] a = start(concat(COMMON, WITHOUT));
      long[] b = start(concat(COMMON, WITH));
      if (i >= warmUp) {
        without.add(a);
        with.add(b);
      }
    }
    System.out.printf("starts of each: %d, after %d warm-up starts of each%n", runs, warmUp);
    String[] measures = {"wall time", "main thread CPU time"};
    for (int m = 0; m < 2; m++) {
      int k = m;
      List<Long> base = without.stream().map(t -> t[k]).toList();
      List<Long> bw = with.stream().map(t -> t[k]).toList();
      System.out.printf("%s: without the starter median %.1f ms (p90 %.1f), with it median %.1f ms (p90 %.1f): "
          + "added %.1f ms%n", measures[m], ms(pct(base, 50)), ms(pct(base, 90)), ms(pct(bw, 50)), ms(pct(bw, 90)),
          ms(pct(bw, 50) - pct(base, 50)));
    }
  }

  /** The wall time and the main thread's CPU time of one start, in nanoseconds. */
  private static long[] start(String[] properties) {
    SpringApplication app = new SpringApplication(App.class);
    app.setWebApplicationType(WebApplicationType.REACTIVE);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long cpu0 = threads.getCurrentThreadCpuTime();
    long t0 = System.nanoTime();
    try (ConfigurableApplicationContext context = app.run(Arrays.stream(properties).map(p -> "--" + p)
        .toArray(String[]::new))) {
      return new long[] {System.nanoTime() - t0, threads.getCurrentThreadCpuTime() - cpu0};
    }
  }

  private static String[] concat(String[] a, String[] b) {
    String[] all = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }

  private static long pct(List<Long> values, int percentile) {
    long[] sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(percentile / 100.0 * sorted.length) - 1)];
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
