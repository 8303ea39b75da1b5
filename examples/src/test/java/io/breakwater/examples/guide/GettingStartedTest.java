package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.breakwater.deadline.DeadlineExceededException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The tests of {@code docs/getting-started.md}: the first test a user writes, in virtual time, and what {@code block()}
 * does with a timeout. JUnit's own assertions only, so that the page's {@code pom.xml} (JUnit and reactor-test) is all
 * it needs: {@code GettingStartedPomIT} builds and runs it with that {@code pom.xml}.
 */
class GettingStartedTest {

  // snippet:getting-started-test
  @Test
  void aCallThatNeverAnswersFailsExactlyAtItsDeadline() {
    StepVerifier.withVirtualTime(() -> Mono.<String>never()
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(9_999))
        .thenAwait(Duration.ofMillis(1))
        .expectError(DeadlineExceededException.class)   // a java.util.concurrent.TimeoutException
        .verify();
  }
  // end-snippet

  // snippet:getting-started-block
  @Test
  void blockWrapsTheCheckedTimeoutAndExceptionsUnwrapGetsItBack() {
    Mono<String> call = Mono.<String>never().transformDeferred(withDeadline(Duration.ofMillis(50)));

    RuntimeException thrown = assertThrows(RuntimeException.class, call::block);  // block() wraps checked exceptions
    Throwable timeout = Exceptions.unwrap(thrown);                                // the DeadlineExceededException
    assertInstanceOf(TimeoutException.class, timeout);
  }
  // end-snippet
}
