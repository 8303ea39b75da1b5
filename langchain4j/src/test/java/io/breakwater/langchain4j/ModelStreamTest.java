package io.breakwater.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.HttpException;
import dev.langchain4j.exception.RetriableException;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.chat.response.StreamingHandle;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** The stream adapter's contract, driven by a model that pushes what the test tells it to, on the test's thread. */
class ModelStreamTest {

  private static final ChatRequest REQUEST = ChatRequest.builder().messages(UserMessage.from("hi")).build();

  /** The texts of the model's partial responses, and nothing of the end of the answer. */
  private static Flux<String> tokens(StreamingChatModel model) {
    return ModelStream.events(model, REQUEST, Schedulers.boundedElastic())
        .filter(ModelEvent.Text.class::isInstance)
        .map(event -> ((ModelEvent.Text) event).partial().text());
  }

  /** A model whose stream the test drives by hand; counts the requests it got and the cancellations of its stream. */
  private static final class PushedModel implements StreamingChatModel {

    final AtomicInteger requests = new AtomicInteger();
    final AtomicInteger cancellations = new AtomicInteger();
    volatile StreamingChatResponseHandler handler;
    private final StreamingHandle handle = new StreamingHandle() {
      private volatile boolean cancelled;

      @Override
      public void cancel() {
        cancelled = true;
        cancellations.incrementAndGet();
      }

      @Override
      public boolean isCancelled() {
        return cancelled;
      }
    };

    private final CountDownLatch chatted = new CountDownLatch(1);

    @Override
    public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
      requests.incrementAndGet();
      this.handler = handler;
      chatted.countDown();
    }

    /** The handler of the stream the adapter started, once it has started it (on another thread). */
    StreamingChatResponseHandler handler() {
      try {
        assertThat(chatted.await(5, TimeUnit.SECONDS)).as("the adapter started the model's stream").isTrue();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
      return handler;
    }

    void token(String text) {
      handler().onPartialResponse(new PartialResponse(text), new PartialResponseContext(handle));
    }
  }

  @Test
  void nothingIsSentBeforeSubscriptionAndEachSubscriptionSendsItsOwnRequest() throws InterruptedException {
    PushedModel model = new PushedModel();
    var tokens = tokens(model);
    assertThat(model.requests).hasValue(0);

    tokens.subscribe();
    tokens.subscribe();
    for (int i = 0; i < 500 && model.requests.get() < 2; i++) {
      Thread.sleep(10);   // each request starts on boundedElastic
    }
    assertThat(model.requests).hasValue(2);
  }

  @Test
  void eventsWithinTheBufferWaitForDemandAndTheEndIsAnEventToo() {
    PushedModel model = new PushedModel();
    StepVerifier.create(ModelStream.events(model, REQUEST, Schedulers.boundedElastic()), 0)
        .then(() -> {
          for (int i = 0; i < 100; i++) {
            model.token("t" + i);
          }
          model.handler().onCompleteResponse(ChatResponse.builder().aiMessage(AiMessage.from("done")).build());
        })
        .expectNoEvent(Duration.ZERO)
        .thenRequest(100)
        .expectNextCount(100)
        .thenRequest(1)
        .expectNextMatches(event -> event instanceof ModelEvent.Complete && !event.isContent())
        .verifyComplete();
  }

  @Test
  void aSubscriberTooFarBehindFailsWithAnOverflowInsteadOfBufferingWithoutBound() {
    PushedModel model = new PushedModel();
    StepVerifier.create(tokens(model), 0)
        .then(() -> {
          for (int i = 0; i <= ModelStream.MAX_BUFFERED_EVENTS; i++) {
            model.token("t" + i);
          }
        })
        .thenRequest(ModelStream.MAX_BUFFERED_EVENTS)
        .expectNextCount(ModelStream.MAX_BUFFERED_EVENTS)
        .verifyErrorMatches(e -> e instanceof IllegalStateException && e.getMessage().contains("overrun"));
    // the overflow also stops the model's stream
    assertThat(model.cancellations).hasValue(1);
  }

  @Test
  void cancellingBeforeTheFirstTokenCancelsTheStreamWhenItComesAndDeliversNothing() {
    PushedModel model = new PushedModel();
    StepVerifier.create(tokens(model))
        .then(model::handler)   // the request is out
        .thenCancel()
        .verify();
    assertThat(model.cancellations).hasValue(0);   // no handle yet: nothing to cancel with

    model.token("late");
    assertThat(model.cancellations).hasValue(1);
  }

  @Test
  void cancellingMidStreamCancelsTheModelsStream() {
    PushedModel model = new PushedModel();
    StepVerifier.create(tokens(model).take(2))
        .then(() -> {
          model.token("a");
          model.token("b");
        })
        .expectNext("a", "b")
        .verifyComplete();
    assertThat(model.cancellations).hasValue(1);
  }

  @Test
  void anHttpErrorBecomesAnHttpStatusExceptionClassifiedByItsStatus() {
    int[] statuses = {429, 503, 400, 401};
    FailureKind[] kinds = {FailureKind.RATE_LIMITED, FailureKind.SERVER_ERROR, FailureKind.INVALID_ARGUMENT,
        FailureKind.CLIENT_ERROR};
    for (int i = 0; i < statuses.length; i++) {
      int status = statuses[i];
      FailureKind kind = kinds[i];
      PushedModel model = new PushedModel();
      // as LangChain4j reports it: one of its own exception types, with the HTTP error as the cause
      Throwable reported = new RetriableException(new HttpException(status, "{\"error\":\"no\"}"));
      StepVerifier.create(tokens(model))
          .then(() -> model.handler().onError(reported))
          .verifyErrorSatisfies(e -> {
            assertThat(e).isInstanceOf(HttpStatusException.class).hasCause(reported);
            assertThat(((HttpStatusException) e).status()).isEqualTo(status);
            assertThat(FailureClassifier.defaults().classify(e)).as("status %d", status).isEqualTo(kind);
          });
    }
  }

  @Test
  void otherErrorsPassAsTheyAre() {
    PushedModel model = new PushedModel();
    IOException reset = new IOException("Connection reset");
    StepVerifier.create(tokens(model))
        .then(() -> model.handler().onError(reset))
        .verifyErrorSatisfies(e -> assertThat(e).isSameAs(reset));
  }
}
