package io.breakwater.internal.stream.llm;

import org.jspecify.annotations.Nullable;


/**
 * One HTTP attempt of a call, as a {@link Transport} opens it: the request body, and for a resume either the
 * {@code Last-Event-ID} to send or the OpenAI Responses id and sequence number to stream again from.
 *
 * @param number 1 for the first attempt
 * @param body the JSON request body
 * @param lastEventId the {@code Last-Event-ID} to send, or {@code null}
 * @param responseId the Responses id to {@code GET} again, or {@code null} to {@code POST} the body
 * @param startingAfter the sequence number to resume after (with {@code responseId})
 */
public record Attempt(int number, byte[] body, @Nullable String lastEventId, @Nullable String responseId,
    long startingAfter) {}
