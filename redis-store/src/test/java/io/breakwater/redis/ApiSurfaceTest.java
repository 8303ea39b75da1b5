package io.breakwater.redis;

import io.breakwater.testing.api.ApiSurface;
import org.junit.jupiter.api.Test;

/**
 * The public API of breakwater-redis-store is the one committed in redis-store/api/breakwater-redis-store.api:
 * an addition or a removal shows as a diff in review.
 * Regenerate the file after an intended change (the failure message gives the command, see {@link ApiSurface}).
 */
class ApiSurfaceTest {

  @Test
  void publicApiIsTheOneCommittedInTheApiFile() {
    ApiSurface.assertUnchanged(RedisIdempotencyStore.class, "breakwater-redis-store", "redis-store");
  }
}
