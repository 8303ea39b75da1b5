package io.breakwater.boot;

import io.breakwater.testing.api.ApiSurface;
import org.junit.jupiter.api.Test;

/**
 * The public API of breakwater-spring-boot-starter is the one committed in spring-boot-starter/api/breakwater-spring-boot-starter.api:
 * an addition or a removal shows as a diff in review.
 * Regenerate the file after an intended change (the failure message gives the command, see {@link ApiSurface}).
 */
class ApiSurfaceTest {

  @Test
  void publicApiIsTheOneCommittedInTheApiFile() {
    ApiSurface.assertUnchanged(BreakwaterProperties.class, "breakwater-spring-boot-starter", "spring-boot-starter");
  }
}
