package io.breakwater.failure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.DeadlineExceededException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;
import reactor.netty.http.client.PrematureCloseException;

class FailureClassifierTest {

  private final FailureClassifier classifier = FailureClassifier.defaults();

  @Test
  void timeoutsAreRetryableTimeouts() {
    assertThat(classifier.classify(new TimeoutException())).isEqualTo(FailureKind.TIMEOUT);
    assertThat(classifier.classify(new SocketTimeoutException())).isEqualTo(FailureKind.TIMEOUT);
    assertThat(classifier.classify(io.netty.handler.timeout.ReadTimeoutException.INSTANCE))
        .isEqualTo(FailureKind.TIMEOUT);
    assertThat(classifier.classify(new CallTimeoutException("c", Duration.ofSeconds(1), Duration.ofSeconds(1))))
        .isEqualTo(FailureKind.TIMEOUT);
    assertThat(FailureKind.TIMEOUT.retryability()).isEqualTo(Retryability.RETRYABLE);
  }

  @Test
  void taskDeadlineIsNotRetryable() {
    FailureKind kind = classifier.classify(new DeadlineExceededException("task", Duration.ZERO, Duration.ZERO));
    assertThat(kind).isEqualTo(FailureKind.DEADLINE_EXCEEDED);
    assertThat(kind.retryability()).isEqualTo(Retryability.NON_RETRYABLE);
  }

  @Test
  void connectErrorsResetsAndPrematureClosesAreConnectionFailures() {
    assertThat(classifier.classify(new ConnectException("Connection refused"))).isEqualTo(FailureKind.CONNECTION);
    assertThat(classifier.classify(new SocketException("Connection reset"))).isEqualTo(FailureKind.CONNECTION);
    assertThat(classifier.classify(new ClosedChannelException())).isEqualTo(FailureKind.CONNECTION);
    assertThat(classifier.classify(PrematureCloseException.TEST_EXCEPTION)).isEqualTo(FailureKind.CONNECTION);
    assertThat(classifier.classify(new io.netty.channel.ConnectTimeoutException("connect timed out")))
        .isEqualTo(FailureKind.CONNECTION);
    assertThat(classifier.classify(new IOException("Connection reset by peer"))).isEqualTo(FailureKind.CONNECTION);
  }

  @Test
  void httpStatusesMapAsDocumented() {
    assertThat(classifier.classify(new HttpStatusException(408))).isEqualTo(FailureKind.TIMEOUT);
    assertThat(classifier.classify(new HttpStatusException(429))).isEqualTo(FailureKind.RATE_LIMITED);
    for (int status : new int[] {500, 502, 503, 504}) {
      assertThat(classifier.classify(new HttpStatusException(status))).isEqualTo(FailureKind.SERVER_ERROR);
    }
    assertThat(classifier.classify(new HttpStatusException(400))).isEqualTo(FailureKind.INVALID_ARGUMENT);
    assertThat(classifier.classify(new HttpStatusException(422))).isEqualTo(FailureKind.INVALID_ARGUMENT);
    for (int status : new int[] {401, 403, 404}) {
      assertThat(classifier.classify(new HttpStatusException(status))).isEqualTo(FailureKind.CLIENT_ERROR);
      assertThat(FailureClassifier.ofStatus(status).retryability()).isEqualTo(Retryability.NON_RETRYABLE);
    }
  }

  @Test
  void invalidArgumentsAndErrorsAreNotRetryable() {
    assertThat(classifier.classify(new IllegalArgumentException("bad date"))).isEqualTo(FailureKind.INVALID_ARGUMENT);
    assertThat(classifier.classify(new NumberFormatException("x"))).isEqualTo(FailureKind.INVALID_ARGUMENT);
    assertThat(classifier.classify(new OutOfMemoryError())).isEqualTo(FailureKind.FATAL);
    assertThat(FailureKind.FATAL.retryability()).isEqualTo(Retryability.NON_RETRYABLE);
  }

  @Test
  void unrecognisedFailuresAreUnknown() {
    assertThat(classifier.classify(new IllegalStateException("?"))).isEqualTo(FailureKind.UNKNOWN);
    assertThat(classifier.classify(new IOException("disk full"))).isEqualTo(FailureKind.UNKNOWN);
    assertThat(FailureKind.UNKNOWN.retryability()).isEqualTo(Retryability.UNKNOWN);
  }

  @Test
  void wrappedFailuresAreClassifiedByTheirCause() {
    assertThat(classifier.classify(new RuntimeException("call failed", new ConnectException("refused"))))
        .isEqualTo(FailureKind.CONNECTION);
    assertThat(classifier.classify(Exceptions.propagate(new TimeoutException()))).isEqualTo(FailureKind.TIMEOUT);
  }

  @Test
  void causeCyclesDoNotLoop() {
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.initCause(b);
    assertThat(classifier.classify(a)).isEqualTo(FailureKind.UNKNOWN);
  }

  @Test
  void customRulesComeFirstAndHandOverWhenUnsure() {
    class PaymentDeclined extends RuntimeException {}
    FailureClassifier custom = FailureClassifier.of(PaymentDeclined.class, FailureKind.BUSINESS)
        .orElse(FailureClassifier.defaults());

    assertThat(custom.classify(new PaymentDeclined())).isEqualTo(FailureKind.BUSINESS);
    assertThat(custom.classify(new HttpStatusException(503))).isEqualTo(FailureKind.SERVER_ERROR);
  }

  @Test
  void httpStatusExceptionCarriesHeadersCaseInsensitively() {
    HttpStatusException e = new HttpStatusException(429, Map.of("Retry-After", List.of("7")), "slow down");

    assertThat(e.status()).isEqualTo(429);
    assertThat(e.header("retry-after")).contains("7");
    assertThat(e.header("x-should-retry")).isEmpty();
    assertThat(e).hasMessage("HTTP 429: slow down");
    assertThatIllegalArgumentException().isThrownBy(() -> new HttpStatusException(42))
        .withMessageContaining("give 100 to 599");
  }

  @Test
  void tagsAreLowerCaseNames() {
    assertThat(FailureKind.RATE_LIMITED.tag()).isEqualTo("rate_limited");
  }
}
