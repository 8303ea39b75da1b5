package io.breakwater.blockhound;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Guards the build's promise: a blocking call on a non-blocking thread fails the test run. */
class BlockHoundIsInstalledTest {

  @Test
  void blockingOnAParallelThreadFails() {
    StepVerifier.create(Mono.fromCallable(() -> {
              Thread.sleep(1);
              return "slept";
            })
            .subscribeOn(Schedulers.parallel()))
        .expectError(BlockingOperationError.class)
        .verify(Duration.ofSeconds(10));
  }
}
