package io.breakwater.langchain4j;

import io.breakwater.testing.api.ApiSurface;
import org.junit.jupiter.api.Test;

/**
 * The public API of breakwater-langchain4j is the one committed in langchain4j/api/breakwater-langchain4j.api: an
 * addition or a removal shows as a diff in review. Regenerate the file after an intended change (see
 * {@link ApiSurface}).
 */
class ApiSurfaceTest {

  @Test
  void publicApiIsTheOneCommittedInTheApiFile() {
    ApiSurface.assertUnchanged(ModelGuard.class, "breakwater-langchain4j", "langchain4j");
  }
}
