package io.breakwater.internal.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.breakwater.stream.EventTooLargeException;
import io.breakwater.stream.ServerSentEvent;
import io.breakwater.stream.ServerSentEvents;
import io.breakwater.testing.Fuzz;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * The SSE decoder fed random, mostly hostile bytes (invalid UTF-8, CR/LF mixes, NULs, byte-order marks, lines over
 * the limit, random fields) in random chunkings: it only ever yields events or {@link EventTooLargeException}, the
 * same events (before a failure too) and the same failure whatever the chunking, and never holds more than the limit
 * of assembled bytes (nor buffers of more than the limit each) between buffers. Sized by {@link Fuzz}.
 */
class SseParserFuzzTest {

  private static final int INITIAL_CAPACITY = 128;

  private static final byte[][] EOLS = {bytes("\n"), bytes("\r"), bytes("\r\n"), bytes("\n\r"), bytes("\r\r\n")};
  private static final byte[][] INVALID_UTF8 = {
      {(byte) 0xC3}, {(byte) 0xFF}, {(byte) 0xFE}, {(byte) 0xC0, (byte) 0x80}, {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
      {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, {(byte) 0xF0, (byte) 0x9F, (byte) 0x98},
      {(byte) 0x80, (byte) 0x80}};
  private static final byte[][] VALID_UTF8 = {bytes("é"), bytes("😀"), bytes("日本"), bytes("\u200F"), bytes("e\u0301")};
  private static final String[] FIELDS = {"data", "data", "data", "data", "event", "id", "retry", "", "dat", "DATA",
      "data ", "idx"};
  private static final byte[] BOM = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};

  @Test
  void randomBytesInRandomChunksGiveEventsOrEventTooLargeInBoundedMemory() {
    long seed = Fuzz.seed(0x55E_F022L);
    int cases = Fuzz.cases(800);
    int tooLarge = 0;
    long events = 0;
    long bytes = 0;
    for (int c = 0; c < cases; c++) {
      String replay = Fuzz.replay(seed, c);
      SplittableRandom random = Fuzz.random(seed, c);
      int max = 16 + random.nextInt(random.nextBoolean() ? 256 : 8192);
      boolean comments = random.nextBoolean();
      byte[] stream = hostileStream(random, max);
      bytes += stream.length;

      Outcome whole = decode(stream, List.of(stream.length), max, comments, replay);
      Outcome chunked = decode(stream, chunking(random, stream.length), max, comments, replay);
      assertThat(chunked.tooLarge).as("%s: failure independent of chunking", replay).isEqualTo(whole.tooLarge);
      assertThat(chunked.events).as("%s: events (before a failure too) independent of chunking", replay)
          .isEqualTo(whole.events);
      if (c % 10 == 0) {
        throughThePublicDecoder(stream, chunking(random, stream.length), max, comments, whole, replay);
      }
      tooLarge += whole.tooLarge ? 1 : 0;
      events += whole.events.size();
    }
    System.out.printf("SseParserFuzzTest: %d streams (%d bytes), %d events, %d over the limit; seed %d%n", cases,
        bytes, events, tooLarge, seed);
    assertThat(tooLarge).as("some streams go over the limit").isPositive().isLessThan(cases);
  }

  /** The decoder's Flux signals the same events, or the same typed error, whatever else happens. */
  private static void throughThePublicDecoder(byte[] stream, List<Integer> chunks, int max, boolean comments,
      Outcome expected, String replay) {
    ServerSentEvents decoder = ServerSentEvents.builder().maxEventBytes(max).comments(comments).build();
    List<ServerSentEvent> got = new ArrayList<>();
    Throwable[] error = new Throwable[1];
    decoder.events(Flux.fromIterable(slices(stream, chunks))).subscribe(got::add, e -> error[0] = e);
    if (expected.tooLarge) {
      assertThat(error[0]).as("%s: the Flux fails with the typed error", replay)
          .isInstanceOf(EventTooLargeException.class);
    } else {
      assertThat(error[0]).as("%s: the Flux completes", replay).isNull();
    }
    assertThat(got).as("%s: the Flux gives the parser's events, before a failure too", replay)
        .isEqualTo(expected.events);
  }

  private record Outcome(List<ServerSentEvent> events, boolean tooLarge) {}

  private static Outcome decode(byte[] stream, List<Integer> chunks, int max, boolean comments, String replay) {
    SseParser parser = new SseParser(max, comments);
    List<ServerSentEvent> events = new ArrayList<>();
    for (ByteBuf buffer : slices(stream, chunks)) {
      try {
        parser.feed(buffer).forEach(events::add);   // the events before a failure come first, then it is thrown
      } catch (EventTooLargeException e) {
        assertThat(e.getMessage()).as(replay).contains(Integer.toString(max));
        return new Outcome(events, true);
      } catch (Throwable unexpected) {
        fail(replay + ": " + unexpected + " is not a typed error", unexpected);
      }
      assertThat(parser.bufferedBytes()).as("%s: bytes held between buffers", replay).isLessThanOrEqualTo(max);
      assertThat(parser.retainedBytes()).as("%s: buffer capacity held between buffers", replay)
          .isLessThanOrEqualTo(2 * Math.max(max, INITIAL_CAPACITY));
    }
    return new Outcome(events, false);
  }

  private static List<ByteBuf> slices(byte[] stream, List<Integer> chunks) {
    List<ByteBuf> buffers = new ArrayList<>(chunks.size());
    int offset = 0;
    for (int length : chunks) {
      buffers.add(Unpooled.wrappedBuffer(stream, offset, length));
      offset += length;
    }
    return buffers;
  }

  /** Random chunk lengths summing to {@code length}, with empty chunks now and then. */
  private static List<Integer> chunking(SplittableRandom random, int length) {
    List<Integer> chunks = new ArrayList<>();
    int bound = 1 + random.nextInt(random.nextBoolean() ? 8 : 4096);
    int left = length;
    while (left > 0) {
      int n = random.nextInt(20) == 0 ? 0 : Math.min(left, 1 + random.nextInt(bound));
      chunks.add(n);
      left -= n;
    }
    return chunks;
  }

  private static byte[] hostileStream(SplittableRandom random, int max) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    if (random.nextInt(4) == 0) {
      out.writeBytes(BOM);
    }
    boolean huge = random.nextInt(5) == 0;   // a stream with lines about the size of the limit, or over it
    int target = random.nextInt(huge ? 4 * max + 64 : 2048);
    while (out.size() < target) {
      switch (random.nextInt(11)) {
        case 0 -> {
          byte[] noise = new byte[random.nextInt(64)];
          random.nextBytes(noise);
          out.writeBytes(noise);
        }
        case 1, 2, 3 -> {
          String field = FIELDS[random.nextInt(FIELDS.length)];
          out.writeBytes(bytes(random.nextInt(10) == 0 ? ":" + field : field));
          if (random.nextInt(5) != 0) {
            out.writeBytes(bytes(random.nextBoolean() ? ": " : ":"));
          }
          int parts = random.nextInt(4);
          for (int i = 0; i < parts; i++) {
            out.writeBytes(value(random));
          }
          out.writeBytes(EOLS[random.nextInt(EOLS.length)]);
        }
        case 4 -> out.writeBytes(EOLS[random.nextInt(EOLS.length)]);
        case 5 -> out.writeBytes(bytes(random.nextBoolean() ? "\n\n" : "\r\n\r\n"));   // dispatch
        case 6 -> out.writeBytes(new byte[1 + random.nextInt(3)]);   // NULs
        case 7 -> out.writeBytes(random.nextBoolean() ? BOM : INVALID_UTF8[random.nextInt(INVALID_UTF8.length)]);
        case 8 -> {
          if (huge && random.nextInt(3) == 0) {
            out.writeBytes(bytes("data: "));
            out.writeBytes(bytes("x".repeat(max / 2 + random.nextInt(3 * max))));
          }
        }
        default -> out.writeBytes(VALID_UTF8[random.nextInt(VALID_UTF8.length)]);
      }
    }
    return out.toByteArray();
  }

  private static byte[] value(SplittableRandom random) {
    return switch (random.nextInt(5)) {
      case 0 -> INVALID_UTF8[random.nextInt(INVALID_UTF8.length)];
      case 1 -> VALID_UTF8[random.nextInt(VALID_UTF8.length)];
      case 2 -> bytes(Long.toString(random.nextLong(), random.nextBoolean() ? 10 : 36));
      case 3 -> new byte[] {0};
      default -> bytes("v" + random.nextInt(1000) + (random.nextBoolean() ? " " : ""));
    };
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
