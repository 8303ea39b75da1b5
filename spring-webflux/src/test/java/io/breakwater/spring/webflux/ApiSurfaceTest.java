package io.breakwater.spring.webflux;

import io.breakwater.testing.api.ApiSurface;
import org.junit.jupiter.api.Test;

/**
 * The public API of breakwater-spring-webflux is the one committed in
 * spring-webflux/api/breakwater-spring-webflux.api: an addition or a removal shows as a diff in review.
 * Regenerate the file after an intended change (the failure message gives the command, see {@link ApiSurface}).
 */
class ApiSurfaceTest {

  @Test
  void publicApiIsTheOneCommittedInTheApiFile() {
    ApiSurface.assertUnchanged(BreakwaterExchangeFilter.class, "breakwater-spring-webflux", "spring-webflux");
  }
}
