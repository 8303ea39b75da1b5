package io.breakwater;

import io.breakwater.testing.api.ApiSurface;
import org.junit.jupiter.api.Test;

/**
 * The public API of breakwater-core is the one committed in core/api/breakwater-core.api:
 * an addition or a removal shows as a diff in review.
 * Regenerate the file after an intended change (the failure message gives the command, see {@link ApiSurface}).
 */
class ApiSurfaceTest {

  @Test
  void publicApiIsTheOneCommittedInTheApiFile() {
    ApiSurface.assertUnchanged(Breakwater.class, "breakwater-core", "core");
  }
}
