package io.breakwater.internal.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.redisson.api.RScript;
import org.redisson.client.RedisNoScriptException;
import reactor.core.publisher.Mono;

/**
 * A Lua script and its SHA-1, computed once: run with {@code EVALSHA}, so neither its text nor Redisson's script-cache
 * bookkeeping ({@code evalAsync} cuts the text for the command's name, copies the arguments and chains a second future
 * on every call) travels with each call. A server that does not have the script ({@code NOSCRIPT}: restarted,
 * failed over, {@code SCRIPT FLUSH}) ran nothing, so the script is loaded on the key's master and sent once more.
 *
 * @param text the script
 * @param sha its SHA-1, in lower-case hex, as Redis names it
 */
public record LuaScript(String text, String sha) {

  /** {@code text} with its SHA-1. */
  public static LuaScript of(String text) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
      return new LuaScript(text, HexFormat.of().formatHex(digest));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is not available in this JVM", e);
    }
  }

  /**
   * Runs the script on {@code key} alone, in read-write mode (on the master), through {@code pipeline}: with the
   * scripts of other calls when they are many at once. Cancelling the returned Mono before the script is sent (while
   * it waits for a place in the pipeline) drops it unsent; once sent, the command runs to its end, as Redisson's
   * {@code evalAsync} did: a command cancelled while Redis was down or paused could leave its encoded arguments
   * unreleased (Netty's leak detector reported one in the redis-store integration tests), and a command already
   * written may run anyway.
   */
  public <R> Mono<R> run(ScriptPipeline pipeline, String key, RScript.ReturnType type, Object... args) {
    // the pipeline's own future, not Redisson's: cancelling it only tells the pipeline not to send the script
    Mono<R> evalSha = Mono.fromFuture(() -> pipeline.<R>evalSha(key, sha, type, args), false);
    return evalSha.onErrorResume(RedisNoScriptException.class,
        noScript -> Mono.fromFuture(() -> pipeline.direct().scriptLoadAsync(key, text).toCompletableFuture(), true)
            .then(evalSha));
  }
}
