package io.breakwater.internal.failure;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;

/**
 * Composites judged by their parts. The parts here are failures named after a kind, classified by a classifier of
 * the test's own that reads the kind from the message, so each case says plainly which kinds meet.
 */
class CompositeFailuresTest {

  /** Classifies a failure by its message, the name of a kind; anything else is unknown. */
  private static final FailureClassifier BY_MESSAGE = failure -> {
    try {
      return FailureKind.valueOf(String.valueOf(failure.getMessage()));
    } catch (IllegalArgumentException notAKind) {
      return FailureKind.UNKNOWN;
    }
  };

  private static final Predicate<Throwable> IS_TIMEOUT = TimeoutException.class::isInstance;

  private static Throwable part(FailureKind kind) {
    return new IllegalStateException(kind.name());
  }

  private static FailureKind compositeOf(FailureKind... kinds) {
    Throwable[] parts = new Throwable[kinds.length];
    for (int i = 0; i < kinds.length; i++) {
      parts[i] = part(kinds[i]);
    }
    return CompositeFailures.classify(BY_MESSAGE, Exceptions.multiple(parts));
  }

  /** {@code failure} wrapped in {@code levels} runtime exceptions, each the cause of the next. */
  static Throwable wrapped(Throwable failure, int levels) {
    Throwable outer = failure;
    for (int i = 0; i < levels; i++) {
      outer = new RuntimeException("level " + (levels - i), outer);
    }
    return outer;
  }

  @Test
  void onlyAReactorCompositeIsComposite() {
    assertThat(CompositeFailures.isComposite(Exceptions.multiple(part(FailureKind.TIMEOUT)))).isTrue();
    assertThat(CompositeFailures.isComposite(part(FailureKind.TIMEOUT))).isFalse();
  }

  @Test
  void aFailureThatIsNoCompositeIsClassifiedWholeByTheClassifier() {
    assertThat(CompositeFailures.classify(BY_MESSAGE, part(FailureKind.CIRCUIT_OPEN)))
        .isEqualTo(FailureKind.CIRCUIT_OPEN);
  }

  @Test
  void aCompositeWithoutPartsIsUnknown() {
    assertThat(compositeOf()).isEqualTo(FailureKind.UNKNOWN);
  }

  /** {@code heavier} decides a composite of the two, whichever part comes first. */
  private static void assertOutweighs(FailureKind heavier, FailureKind lighter) {
    assertThat(compositeOf(heavier, lighter)).isEqualTo(heavier);
    assertThat(compositeOf(lighter, heavier)).isEqualTo(heavier);
  }

  @Test
  void aNonRetryablePartOutweighsAnUnknownOneInEitherOrder() {
    assertOutweighs(FailureKind.BUSINESS, FailureKind.UNKNOWN);
  }

  @Test
  void anUnknownPartOutweighsARateLimitInEitherOrder() {
    assertOutweighs(FailureKind.UNKNOWN, FailureKind.RATE_LIMITED);
  }

  @Test
  void aRateLimitOutweighsOtherRetryablePartsInEitherOrder() {
    assertOutweighs(FailureKind.RATE_LIMITED, FailureKind.TIMEOUT);
    assertOutweighs(FailureKind.RATE_LIMITED, FailureKind.CONNECTION);
  }

  @Test
  void ofPartsThatWeighTheSameTheFirstDecides() {
    assertThat(compositeOf(FailureKind.TIMEOUT, FailureKind.CONNECTION)).isEqualTo(FailureKind.TIMEOUT);
    assertThat(compositeOf(FailureKind.CONNECTION, FailureKind.TIMEOUT)).isEqualTo(FailureKind.CONNECTION);
    assertThat(compositeOf(FailureKind.CIRCUIT_OPEN, FailureKind.BUSINESS)).isEqualTo(FailureKind.CIRCUIT_OPEN);
  }

  @Test
  void anyFindsAMatchInTheCauseOfAPartOfAComposite() {
    Throwable composite = Exceptions.multiple(part(FailureKind.BUSINESS), wrapped(new TimeoutException(), 2));

    assertThat(CompositeFailures.any(composite, IS_TIMEOUT)).isTrue();
    assertThat(CompositeFailures.any(wrapped(composite, 1), IS_TIMEOUT)).isTrue();
  }

  @Test
  void anyAnswersNoWhenNeitherTheFailureNorItsCausesNorAnyPartMatches() {
    Throwable composite = Exceptions.multiple(part(FailureKind.BUSINESS), wrapped(part(FailureKind.TIMEOUT), 2));

    assertThat(CompositeFailures.any(composite, IS_TIMEOUT)).isFalse();
    assertThat(CompositeFailures.any(wrapped(part(FailureKind.TIMEOUT), 3), IS_TIMEOUT)).isFalse();
  }

  @Test
  void anyLooksEightLevelsDeepAndNoDeeper() {
    assertThat(CompositeFailures.any(wrapped(new TimeoutException(), CompositeFailures.MAX_DEPTH - 1), IS_TIMEOUT))
        .isTrue();
    assertThat(CompositeFailures.any(wrapped(new TimeoutException(), CompositeFailures.MAX_DEPTH), IS_TIMEOUT))
        .isFalse();
  }

  @Test
  void aPartCountsALevelOfItsOwn() {
    Throwable sevenDeep = Exceptions.multiple(wrapped(new TimeoutException(), CompositeFailures.MAX_DEPTH - 2));
    Throwable eightDeep = Exceptions.multiple(wrapped(new TimeoutException(), CompositeFailures.MAX_DEPTH - 1));

    assertThat(CompositeFailures.any(sevenDeep, IS_TIMEOUT)).isTrue();
    assertThat(CompositeFailures.any(eightDeep, IS_TIMEOUT)).isFalse();
  }

  @Test
  void compositesThatAreEachOthersPartsDoNotLoop() {
    Throwable a = Exceptions.multiple(part(FailureKind.BUSINESS));
    Throwable b = Exceptions.multiple(a);
    a.addSuppressed(b);

    assertThat(CompositeFailures.any(a, IS_TIMEOUT)).isFalse();
  }

  @Test
  void firstFindsTheTypeAmongTheCausesThroughReactorsWrapperEightLevelsDeepAndNoDeeper() {
    TimeoutException timeout = new TimeoutException();
    assertThat(CompositeFailures.first(Exceptions.propagate(new IllegalStateException("call", timeout)),
        TimeoutException.class)).isSameAs(timeout);
    assertThat(CompositeFailures.first(wrapped(new TimeoutException(), CompositeFailures.MAX_DEPTH - 1),
        TimeoutException.class)).isNotNull();
    assertThat(CompositeFailures.first(wrapped(new TimeoutException(), CompositeFailures.MAX_DEPTH),
        TimeoutException.class)).isNull();
    assertThat(CompositeFailures.first(new IllegalStateException(), TimeoutException.class)).isNull();
  }
}
