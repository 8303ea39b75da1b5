package io.breakwater.redis;

import io.breakwater.internal.Saturating;
import io.breakwater.internal.limit.BucketStore;
import io.breakwater.internal.limit.RateSettings;
import io.breakwater.limit.ProviderRateLimits.Quota;
import io.breakwater.limit.ProviderRateLimits.Reading;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RScript;
import org.redisson.api.RScriptReactive;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.client.codec.StringCodec;
import reactor.core.publisher.Mono;

/**
 * A {@link BucketStore} in one Redis hash, {@code bw:rate:{<name>}}, changed only by one Lua script that takes or
 * settles in one atomic step, on Redis {@code TIME} (microseconds): the same arithmetic as the in-memory limit.
 * Redisson's {@code RRateLimiter} does not fit: it has one kind of permit, cannot give permits back (an estimate
 * corrected by actual usage, a call refused before it was sent), cannot be told what the provider says (remaining,
 * limit, reset, a reserve after a 429), and does not say when permits will be there.
 *
 * <p>A provider's limit lowers a bucket's cap (to one permit at least) for one interval after it last said so
 * ({@code k<d>}, the instant the configured cap comes back); whether a call is too heavy is judged on the configured
 * cap, so one answer of one instance cannot lock every instance out.
 */
final class RedisBuckets implements BucketStore {

  static final String SCRIPT = """
      if redis.replicate_commands then redis.replicate_commands() end
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
      local INF = math.huge
      local DECAY = math.log(2) / 300000000
      local function f(x) return string.format('%.17g', x) end
      local key = KEYS[1]
      local op = ARGV[1]
      local conf = {r = tonumber(ARGV[2]), t = tonumber(ARGV[4])}
      local interval = {r = tonumber(ARGV[3]), t = tonumber(ARGV[5])}
      local raw = redis.call('HGETALL', key)
      local s = {}
      for i = 1, #raw, 2 do s[raw[i]] = tonumber(raw[i + 1]) end
      local dims = {'r', 't'}
      for _, d in ipairs(dims) do
        if s['c' .. d] == nil then
          s['c' .. d] = conf[d]
          s['l' .. d] = conf[d] < 0 and 0 or conf[d]
          s['p' .. d] = 0; s['u' .. d] = now; s['a' .. d] = 0; s['s' .. d] = 0; s['x' .. d] = now
        end
        if s['k' .. d] == nil then s['k' .. d] = now end
      end
      if s.last == nil then s.last = now; s.blk = now end
      local function cap(d) local c = s['c' .. d]; if c < 0 then return INF end; return c end
      local function configured(d) if conf[d] < 0 then return INF end; return conf[d] end
      local function level(d) if cap(d) == INF then return INF end; return s['l' .. d] end
      local function rate(d) return cap(d) / interval[d] end
      local function reserve(d)
        local r = s['s' .. d]
        if r == 0 then return 0 end
        return r * math.exp(-DECAY * math.max(0, now - s['x' .. d]))
      end
      if now > s.last then
        for _, d in ipairs(dims) do
          local c = cap(d)
          if c ~= INF and s['l' .. d] < c then
            local from = s.last
            local lvl = s['l' .. d]
            if s['u' .. d] > from then
              local to = math.min(now, s['u' .. d])
              lvl = lvl + s['p' .. d] * (to - from)
              from = to
            end
            if now > from then lvl = lvl + rate(d) * (now - from) end
            if lvl > c then lvl = c end
            s['l' .. d] = lvl
          end
        end
        s.last = now
      end
      for _, d in ipairs(dims) do
        if cap(d) < configured(d) and now >= s['k' .. d] then
          s['c' .. d] = conf[d]
          if conf[d] < 0 then s['l' .. d] = 0 end
        end
      end
      local function untilD(d, need)
        if cap(d) == INF then return 0 end
        local deficit = need - s['l' .. d]
        if deficit <= 0 then return 0 end
        if need > cap(d) and cap(d) < configured(d) then
          local restored = math.max(0, s['k' .. d] - now)
          if configured(d) == INF then return restored end
          return restored + math.ceil((need - cap(d)) / (configured(d) / interval[d]))
        end
        local from = now
        local pu, pr = s['u' .. d], s['p' .. d]
        if pu > now and pr > 0 then
          local paced = pr * (pu - now)
          if paced >= deficit then return math.ceil(deficit / pr) end
          deficit = deficit - paced
          from = pu
        end
        local base = rate(d)
        if base <= 0 then return -1 end
        return (from - now) + math.ceil(deficit / base)
      end
      local function giveBack(tokens)
        if cap('r') ~= INF then s.lr = math.min(cap('r'), s.lr + 1) end
        if cap('t') ~= INF then s.lt = math.min(cap('t'), s.lt + tokens) end
      end
      local function apply(d, present, limit, remaining, reset, takenSince, admittedAt, shortfall)
        if present ~= 1 then return end
        if limit >= 0 then
          local lim = math.max(1, limit)
          if conf[d] >= 0 then lim = math.min(conf[d], lim) end
          if cap(d) == INF then s['l' .. d] = lim end
          s['c' .. d] = lim
          s['l' .. d] = math.min(s['l' .. d], lim)
          s['k' .. d] = now + interval[d]
        end
        if cap(d) == INF or remaining < 0 then return end
        local rem = remaining - takenSince
        if shortfall then
          local gap = s['l' .. d] - (rem + rate(d) * math.max(0, now - admittedAt))
          local faded = reserve(d)
          if gap > faded then s['s' .. d] = math.min(gap, cap(d) / 2) else s['s' .. d] = faded end
          s['x' .. d] = now
        end
        s['l' .. d] = math.min(s['l' .. d], rem)
        local plimit = cap(d)
        if limit >= 0 then plimit = limit end
        if reset > 0 and remaining < plimit then
          s['p' .. d] = math.min(rate(d), (plimit - remaining) / reset)
          s['u' .. d] = now + reset
        else
          s['u' .. d] = now
        end
      end
      local reply
      if op == 'take' then
        local tokens = tonumber(ARGV[7])
        local taken, heavy, wait = 0, 0, 0
        if tokens > configured('t') or configured('r') < 1 then
          heavy = 1
          wait = -1
        elseif now >= s.blk and level('r') - reserve('r') >= 1 and level('t') - reserve('t') >= tokens then
          if cap('r') ~= INF then s.lr = s.lr - 1 end
          if cap('t') ~= INF then s.lt = s.lt - tokens end
          s.ar = s.ar + 1
          s.at = s.at + tokens
          taken = 1
        else
          wait = math.max(0, s.blk - now)
          local wr = untilD('r', 1 + reserve('r'))
          local wt = untilD('t', tokens + reserve('t'))
          if wr < 0 or wt < 0 then wait = -1 else wait = math.max(wait, wr, wt) end
        end
        reply = {taken, heavy, f(wait), f(s.ar), f(s.at), f(now), f(level('r') - reserve('r')),
          f(level('t') - reserve('t')), f(rate('r')), f(rate('t'))}
      else
        local outcome = ARGV[7]
        local estimate, actual = tonumber(ARGV[8]), tonumber(ARGV[9])
        local admR, admT, admAt = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
        local ra = tonumber(ARGV[21])
        local rejected = outcome == 'rejected'
        if outcome == 'never' or rejected then giveBack(estimate) end
        if outcome == 'ended' and actual >= 0 and cap('t') ~= INF then
          s.lt = math.min(cap('t'), s.lt - (actual - estimate))
        end
        apply('r', tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15]), tonumber(ARGV[16]), s.ar - admR,
          admAt, rejected)
        apply('t', tonumber(ARGV[17]), tonumber(ARGV[18]), tonumber(ARGV[19]), tonumber(ARGV[20]), s.at - admT,
          admAt, rejected)
        if rejected then
          if tonumber(ARGV[13]) ~= 1 and tonumber(ARGV[17]) ~= 1 then
            if cap('r') ~= INF then s.lr = math.min(s.lr, 0) end
            if cap('t') ~= INF then s.lt = math.min(s.lt, 0) end
          end
          if ra < 0 then ra = 1000000 end
        end
        if ra >= 0 and now + ra > s.blk then s.blk = now + ra end
        reply = {1}
      end
      local out = {}
      for k, v in pairs(s) do
        table.insert(out, k)
        table.insert(out, f(v))
      end
      redis.call('HSET', key, unpack(out))
      redis.call('PEXPIRE', key, ARGV[6])
      return reply
      """;

  private final RScriptReactive scripts;
  private final String key;
  private final List<Object> config;

  RedisBuckets(RedissonReactiveClient redisson, String key, RateSettings settings) {
    this.scripts = redisson.getScript(StringCodec.INSTANCE);
    this.key = key;
    long longest = Math.max(micros(settings.requestInterval()), micros(settings.tokenInterval())) / 1000;
    this.config = List.of(Long.toString(settings.requests()), Long.toString(micros(settings.requestInterval())),
        Long.toString(settings.tokens()), Long.toString(micros(settings.tokenInterval())),
        Long.toString(Math.max(Duration.ofMinutes(10).toMillis(), 2 * longest)));
  }

  /**
   * Microseconds of {@code interval} (the learnt interval when {@code null}), saturated: a provider's reading comes
   * from a reader that may be the application's own, with any duration.
   */
  private static long micros(@Nullable Duration interval) {
    return Saturating.nanos(interval != null ? interval : RateSettings.LEARNT_INTERVAL) / 1000;
  }

  @Override
  public Mono<Taken> take(long tokens) {
    List<Object> args = new ArrayList<>(8);
    args.add("take");
    args.addAll(config);
    args.add(Long.toString(tokens));
    return eval(args).map(reply -> {
      long wait = (long) number(reply.get(2));
      return new Taken(((Number) reply.get(0)).longValue() == 1, ((Number) reply.get(1)).longValue() == 1,
          wait < 0 ? Long.MAX_VALUE : Saturating.multiply(wait, 1000), number(reply.get(3)), number(reply.get(4)),
          (long) number(reply.get(5)), number(reply.get(6)), number(reply.get(7)), number(reply.get(8)) / 1000,
          number(reply.get(9)) / 1000);
    });
  }

  @Override
  public Mono<Void> settle(Settlement s) {
    List<Object> args = new ArrayList<>(21);
    args.add("settle");
    args.addAll(config);
    args.add(switch (s.outcome()) {
      case ENDED -> "ended";
      case NEVER_SENT -> "never";
      case REJECTED -> "rejected";
    });
    args.add(Long.toString(s.estimate()));
    args.add(Long.toString(s.actual()));
    args.add(format(s.admittedRequests()));
    args.add(format(s.admittedTokens()));
    args.add(Long.toString(s.admittedAt()));
    Reading r = s.reading() != null ? s.reading() : Reading.NONE;
    quota(args, r.requests());
    quota(args, r.tokens());
    args.add(Long.toString(r.retryAfter() == null ? -1 : micros(r.retryAfter())));
    return eval(args).then();
  }

  private static void quota(List<Object> args, @Nullable Quota q) {
    args.add(q == null ? "0" : "1");
    args.add(Long.toString(q == null ? -1 : q.limit()));
    args.add(Long.toString(q == null ? -1 : q.remaining()));
    args.add(Long.toString(q == null || q.reset() == null ? -1 : micros(q.reset())));
  }

  private Mono<List<Object>> eval(List<Object> args) {
    return scripts.eval(key, RScript.Mode.READ_WRITE, SCRIPT, RScript.ReturnType.LIST, List.of(key), args.toArray());
  }

  private static String format(double value) {
    return Double.toString(value);
  }

  /** A number the script formatted with {@code %.17g}: {@code inf} for an unlimited bucket. */
  private static double number(Object value) {
    if (value instanceof Number n) {
      return n.doubleValue();
    }
    String s = value.toString().trim();
    return switch (s) {
      case "inf", "+inf" -> Double.POSITIVE_INFINITY;
      case "-inf" -> Double.NEGATIVE_INFINITY;
      default -> Double.parseDouble(s);
    };
  }

  @Override
  public String toString() {
    return "Redis hash " + key;
  }
}
