package io.breakwater.internal.redis;

/**
 * The Lua scripts of {@code RedisIdempotencyStore}, one small hash per idempotency key ({@code KEYS[1]}): fields
 * {@code fp} (the keyed fingerprint), {@code owner}, {@code state} ({@code F} in flight, {@code D} done), {@code exp}
 * (the lease's end, in Redis {@code TIME} milliseconds), {@code r}, {@code k}, {@code m} (the outcome: result JSON,
 * failure kind, failure message) and {@code w} (some process waits for it). Each touches its one key only.
 */
public final class IdempotencyScripts {

  public static final LuaScript CLAIM = LuaScript.of("""
      if redis.replicate_commands then redis.replicate_commands() end
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local lease = tonumber(ARGV[3])
      local r = redis.call('HMGET', KEYS[1], 'fp', 'owner', 'state', 'exp', 'r', 'k', 'm')
      if not r[1] then
        redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'owner', ARGV[2], 'state', 'F', 'exp', tostring(now + lease))
        redis.call('PEXPIRE', KEYS[1], 2 * lease)
        return {'A', '0'}
      end
      if r[1] ~= ARGV[1] then return {'M', r[1]} end
      if r[3] == 'D' then return {'D', r[5] or '', r[6] or '', r[7] or ''} end
      if r[2] == ARGV[2] then return {'A', '0'} end
      local exp = tonumber(r[4])
      if exp <= now then
        redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'exp', tostring(now + lease))
        redis.call('PEXPIRE', KEYS[1], 2 * lease)
        return {'A', '1'}
      end
      return {'B', tostring(exp - now)}
      """);

  public static final LuaScript COMPLETE = LuaScript.of("""
      local r = redis.call('HMGET', KEYS[1], 'owner', 'state', 'w')
      if r[1] == ARGV[1] and r[2] == 'F' then
        redis.call('HSET', KEYS[1], 'state', 'D', 'r', ARGV[2], 'k', ARGV[3], 'm', ARGV[4])
        redis.call('HDEL', KEYS[1], 'exp', 'w')
        redis.call('PEXPIRE', KEYS[1], ARGV[5])
        if r[3] then redis.call('PUBLISH', ARGV[6], ARGV[7]) end
        return 1
      end
      if r[1] == ARGV[1] and r[2] == 'D' then return 1 end
      return 0
      """);

  public static final LuaScript RENEW = LuaScript.of("""
      if redis.replicate_commands then redis.replicate_commands() end
      local r = redis.call('HMGET', KEYS[1], 'owner', 'state')
      if r[1] == ARGV[1] and r[2] == 'F' then
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local lease = tonumber(ARGV[2])
        redis.call('HSET', KEYS[1], 'exp', tostring(now + lease))
        redis.call('PEXPIRE', KEYS[1], 2 * lease)
        return 1
      end
      return 0
      """);

  public static final LuaScript RELEASE = LuaScript.of("""
      local r = redis.call('HMGET', KEYS[1], 'owner', 'state', 'w')
      if r[1] == ARGV[1] and r[2] == 'F' then
        redis.call('DEL', KEYS[1])
        if r[3] then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
        return 1
      end
      return 0
      """);

  /**
   * A process starts waiting for a key: a record in flight is marked ({@code w}), so that its completion or release
   * publishes; the record's state is returned. One script, so a completion lands either before it (the state says
   * so) or after it (and publishes).
   */
  public static final LuaScript WAIT = LuaScript.of("""
      local s = redis.call('HGET', KEYS[1], 'state')
      if s == 'F' then redis.call('HSET', KEYS[1], 'w', '1') end
      return s or ''
      """);

  private IdempotencyScripts() {}
}
