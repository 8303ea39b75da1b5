package io.breakwater.internal.failure;

import static io.breakwater.internal.failure.CompositeFailuresTest.wrapped;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureKind;
import java.io.IOException;
import java.net.UnknownHostException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;

/**
 * The default rules past the common cases of {@code FailureClassifierTest}: types known by name only, messages,
 * the depth of the walk and composites nested in causes and in one another.
 */
class DefaultFailureClassifierTest {

  private final DefaultFailureClassifier classifier = DefaultFailureClassifier.INSTANCE;

  // Stand-ins for Netty, Reactor Netty and JDK types that the classifier knows by simple name only, as a shaded
  // copy of Netty would carry them.
  static class ReadTimeoutException extends RuntimeException {}

  static class WriteTimeoutException extends RuntimeException {}

  static class PoolAcquireTimeoutException extends RuntimeException {}

  static class HttpTimeoutException extends RuntimeException {}

  static class ConnectTimeoutException extends RuntimeException {}

  static class PrematureCloseException extends RuntimeException {}

  static class AbortedException extends RuntimeException {}

  static class NativeIoException extends RuntimeException {}

  static class ConnectException extends RuntimeException {}

  static class NoRouteToHostException extends RuntimeException {}

  /** A type of a library's own, below one known by name. */
  static class PooledConnectionClosed extends PrematureCloseException {}

  @Test
  void timeoutTypesAreKnownByTheirSimpleNameWhateverTheirPackage() {
    for (Throwable t : new Throwable[] {new ReadTimeoutException(), new WriteTimeoutException(),
        new PoolAcquireTimeoutException(), new HttpTimeoutException()}) {
      assertThat(classifier.classify(t)).as(t.getClass().getSimpleName()).isEqualTo(FailureKind.TIMEOUT);
    }
  }

  @Test
  void connectionTypesAreKnownByTheirSimpleNameWhateverTheirPackage() {
    for (Throwable t : new Throwable[] {new ConnectTimeoutException(), new PrematureCloseException(),
        new AbortedException(), new NativeIoException(), new ConnectException(), new NoRouteToHostException()}) {
      assertThat(classifier.classify(t)).as(t.getClass().getSimpleName()).isEqualTo(FailureKind.CONNECTION);
    }
  }

  @Test
  void aSubtypeOfATypeKnownByNameIsOfItsKind() {
    assertThat(classifier.classify(new PooledConnectionClosed())).isEqualTo(FailureKind.CONNECTION);
  }

  @Test
  void anUnknownHostIsAConnectionFailure() {
    assertThat(classifier.classify(new UnknownHostException("api.example"))).isEqualTo(FailureKind.CONNECTION);
  }

  @Test
  void everyConnectionMessageOfAnIoExceptionIsAConnectionFailure() {
    for (String message : new String[] {"Connection reset", "Broken pipe", "Connection prematurely closed BEFORE "
        + "response", "connect: Connection refused"}) {
      assertThat(classifier.classify(new IOException(message))).as(message).isEqualTo(FailureKind.CONNECTION);
    }
  }

  @Test
  void aConnectionMessageOutsideAnIoExceptionOrNoMessageAtAllIsUnknown() {
    assertThat(classifier.classify(new IllegalStateException("Connection reset"))).isEqualTo(FailureKind.UNKNOWN);
    assertThat(classifier.classify(new IOException((String) null))).isEqualTo(FailureKind.UNKNOWN);
  }

  @Test
  void theCauseChainIsFollowedEightLevelsDeepAndNoDeeper() {
    assertThat(classifier.classify(wrapped(new TimeoutException(), CompositeFailures.MAX_DEPTH - 1)))
        .isEqualTo(FailureKind.TIMEOUT);
    assertThat(classifier.classify(wrapped(new TimeoutException(), CompositeFailures.MAX_DEPTH)))
        .isEqualTo(FailureKind.UNKNOWN);
  }

  @Test
  void aCompositePartCountsALevelOfItsOwn() {
    Throwable sevenDeep = Exceptions.multiple(wrapped(new TimeoutException(), CompositeFailures.MAX_DEPTH - 2));
    Throwable eightDeep = Exceptions.multiple(wrapped(new TimeoutException(), CompositeFailures.MAX_DEPTH - 1));

    assertThat(classifier.classify(sevenDeep)).isEqualTo(FailureKind.TIMEOUT);
    assertThat(classifier.classify(eightDeep)).isEqualTo(FailureKind.UNKNOWN);
  }

  @Test
  void aCompositeWithoutPartsIsUnknown() {
    assertThat(classifier.classify(Exceptions.multiple())).isEqualTo(FailureKind.UNKNOWN);
  }

  @Test
  void compositesThatAreEachOthersPartsDoNotLoop() {
    Throwable a = Exceptions.multiple(new TimeoutException());
    Throwable b = Exceptions.multiple(a);
    a.addSuppressed(b);

    assertThat(classifier.classify(a)).isEqualTo(FailureKind.UNKNOWN);
  }
}
