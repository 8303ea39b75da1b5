package io.breakwater.springai;

import io.breakwater.testing.api.ApiSurface;
import org.junit.jupiter.api.Test;

/**
 * The public API of breakwater-spring-ai is the one committed in spring-ai/api/breakwater-spring-ai.api: an addition
 * or a removal shows as a diff in review. Regenerate the file after an intended change (see {@link ApiSurface}).
 */
class ApiSurfaceTest {

  @Test
  void publicApiIsTheOneCommittedInTheApiFile() {
    ApiSurface.assertUnchanged(BreakwaterAdvisor.class, "breakwater-spring-ai", "spring-ai");
  }
}
