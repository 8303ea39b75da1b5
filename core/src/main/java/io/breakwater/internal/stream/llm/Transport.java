package io.breakwater.internal.stream.llm;

import io.netty.buffer.ByteBuf;
import reactor.core.publisher.Flux;

/**
 * Opens the HTTP exchange of one attempt. The HTTP one is {@link HttpTransport}; tests give scripted ones that run in
 * virtual time.
 */
@FunctionalInterface
public interface Transport {

  /**
   * The response body of {@code attempt}, buffer by buffer (each read while it is delivered, then released by its
   * producer); an {@code HttpStatusException} for a status of 400 or more (with a bounded excerpt of the body). The
   * Reactor Context of the subscription carries the deadline. Cancelling the body closes the connection.
   */
  Flux<ByteBuf> open(Attempt attempt);
}
