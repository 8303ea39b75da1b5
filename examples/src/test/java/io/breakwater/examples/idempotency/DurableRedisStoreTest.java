package io.breakwater.examples.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.redisson.config.Config;

class DurableRedisStoreTest {

  @Test
  void theSmallMachineSettingsAreTheOnesTheDocsRecommend() {
    Config config = DurableRedisStore.smallMachine("redis://127.0.0.1:6379");
    assertThat(config.getThreads()).isEqualTo(2);
    assertThat(config.getNettyThreads()).isEqualTo(4);
    assertThat(config.useSingleServer().getConnectionMinimumIdleSize()).isEqualTo(16);
    assertThat(config.useSingleServer().getRetryAttempts()).isEqualTo(1);
  }
}
