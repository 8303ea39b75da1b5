package io.breakwater.testing;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * One wait inside Netty that is not a blocking call of a reactive pipeline: Netty 4.2's adaptive buffer allocator
 * takes a {@code StampedLock} when it grows its magazines ({@code AdaptivePoolingAllocator$MagazineGroup
 * .tryExpandMagazines}, which frees the magazines it replaces under their lock). When two event loops allocate read
 * buffers at that moment, one parks for the few instructions of the other's critical section, and BlockHound reports
 * it from whichever pipeline happened to be reading ({@code HttpResponsesIT} saw it about once in ten fresh JVMs).
 * Netty's own BlockHound integration does not list it yet; Armeria's test rules allow the same call.
 *
 * <p>Registered for every test JVM that has core's test fixtures on its class path
 * ({@code META-INF/services/reactor.blockhound.integration.BlockHoundIntegration}). Everything else Netty's threads
 * do, and everything Breakwater does on them, is still checked.
 */
public final class NettyInternalWaits implements BlockHoundIntegration {

  @Override
  public void applyTo(BlockHound.Builder builder) {
    builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines");
  }
}
