// The pacing decisions as Lua, one script per call so each is atomic across every process that
// shares the bot: the same rules as the outbox's MemoryPacingStore, on Redis time unless the
// caller's time is asked for. Times are milliseconds as decimals with three places (Redis TIME
// has microseconds); numbers pass through strings so Lua never truncates them.

import type { ScriptSource } from "./connection.js";

/** How long a process's global window widens the other processes' after it last asked, ms. */
export const WIDEST_WINDOW_TTL_MS = 5_000;

const PRELUDE = `
local function fmt(x) return string.format('%.3f', x) end
local function nowOf(arg)
  if arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
`;

/**
 * KEYS: global starts (zset), global freeze, global retention, start sequence, chat hash, chat
 * starts (zset), each process's latest global window (hash). ARGV: now ('' = Redis time), has
 * chat, intervalMs, chatLimit, chatWindowMs, chatReserve, paced, globalLimit, globalWindowMs,
 * maxStartInMs, the asking store's id. Returns {'ok'} (start now), {'ok', startInMs} (a global
 * slot reserved that much later) or {'wait', reason, waitMs}.
 */
export const ACQUIRE_SCRIPT: ScriptSource = {
  name: "telepacePacingAcquire",
  keys: 7,
  lua: `${PRELUDE}
local now = nowOf(ARGV[1])
local hasChat = ARGV[2] == '1'
local interval = tonumber(ARGV[3])
local chatLimit = tonumber(ARGV[4])
local chatWindow = tonumber(ARGV[5])
local reserve = tonumber(ARGV[6])
local paced = ARGV[7] == '1'
local globalLimit = tonumber(ARGV[8])
local globalWindow = tonumber(ARGV[9])
local ahead = tonumber(ARGV[10])

local function deny(reason, wait) return {'wait', reason, fmt(wait)} end

-- Milliseconds from 'from' until the window (starts after horizon) has room for one more under limit.
local function windowWait(key, horizon, limit, windowMs, from)
  local inWindow = redis.call('ZCOUNT', key, '(' .. fmt(horizon), '+inf')
  if inWindow < limit then return 0 end
  local r = redis.call('ZRANGEBYSCORE', key, '(' .. fmt(horizon), '+inf', 'WITHSCORES', 'LIMIT', inWindow - limit, 1)
  return tonumber(r[2]) + windowMs - from
end

local globalFrozen = tonumber(redis.call('GET', KEYS[2]) or '')
if globalFrozen and globalFrozen > now then return deny('global-frozen', globalFrozen - now) end

local nextAt, frozen
if hasChat then
  local fields = redis.call('HMGET', KEYS[5], 'next', 'frozen')
  nextAt = tonumber(fields[1])
  frozen = tonumber(fields[2])
  if frozen and frozen > now then return deny('chat-frozen', frozen - now) end
end

local windowed = paced and chatLimit > 0
if paced and hasChat then
  local pacedWait = 0
  if nextAt then pacedWait = math.max(0, nextAt - now) end
  local reserved = 0
  if windowed then
    local horizon = now - chatWindow
    redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', fmt(horizon))
    pacedWait = math.max(pacedWait, windowWait(KEYS[6], horizon, chatLimit, chatWindow, now))
    reserved = windowWait(KEYS[6], horizon, math.max(1, chatLimit - reserve), chatWindow, now)
  end
  if reserved > pacedWait then return deny('chat-reserved', reserved) end
  if pacedWait > 0 then return deny('chat-paced', pacedWait) end
end

local retain = 0
-- When the start is: now, or a global slot reserved ahead (never more than 'ahead' from now).
local at = now
if globalLimit > 0 then
  -- The window widens to the widest another process asked with in the last
  -- ${WIDEST_WINDOW_TTL_MS} ms: each widens its own by how late its requests reach Telegram, and
  -- the slots of all processes interleave, so a slot must keep clear of the latest-arriving
  -- process's starts too. This process's own narrower window applies at once, as in one outbox.
  local widest = globalWindow
  local seen = redis.call('HGETALL', KEYS[7])
  for i = 1, #seen, 2 do
    local window, askedAt = string.match(seen[i + 1], '^(%S+) (%S+)$')
    window = tonumber(window)
    askedAt = tonumber(askedAt)
    if not window or not askedAt or askedAt < now - ${WIDEST_WINDOW_TTL_MS} then
      redis.call('HDEL', KEYS[7], seen[i])
    elseif seen[i] ~= ARGV[11] and window > widest then
      widest = window
    end
  end
  redis.call('HSET', KEYS[7], ARGV[11], fmt(globalWindow) .. ' ' .. fmt(now))
  redis.call('PEXPIRE', KEYS[7], ${WIDEST_WINDOW_TTL_MS})
  globalWindow = widest
  -- Starts are kept for the longest window asked about and counted in this request's window.
  retain = math.max(tonumber(redis.call('GET', KEYS[3]) or '0'), globalWindow)
  redis.call('SET', KEYS[3], fmt(retain), 'PX', 3600000)
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(now - retain))
  -- Slots go out in time order, never before the latest start (a reservation), so the window is
  -- checked as if asked at the slot's time.
  local latest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if latest[2] then at = math.max(now, tonumber(latest[2])) end
  at = at + windowWait(KEYS[1], at - globalWindow, globalLimit, globalWindow, at)
  if at - now > ahead then return deny('global-budget', at - now - ahead) end
end

if globalLimit > 0 then
  redis.call('ZADD', KEYS[1], fmt(at), redis.call('INCR', KEYS[4]))
  redis.call('PEXPIRE', KEYS[1], math.ceil(at - now + retain) + 1000)
end
if hasChat and paced and (interval > 0 or windowed) then
  -- A reserved start paces the chat from its own time.
  redis.call('HSET', KEYS[5], 'next', fmt(at + interval))
  local keepUntil = at + interval
  if windowed then
    redis.call('ZADD', KEYS[6], fmt(at), redis.call('INCR', KEYS[4]))
    redis.call('PEXPIRE', KEYS[6], math.ceil(at - now + chatWindow) + 1)
    keepUntil = math.max(keepUntil, at + chatWindow)
  end
  if frozen then keepUntil = math.max(keepUntil, frozen) end
  redis.call('PEXPIRE', KEYS[5], math.ceil(keepUntil - now) + 1)
end
if at > now then return {'ok', fmt(at - now)} end
return {'ok'}
`,
};

/**
 * KEYS: global freeze, chat hash. ARGV: now ('' = Redis time), has chat, durationMs, the freeze
 * channel, the chat key. A shorter freeze never shortens a longer one. Publishes what is frozen
 * and for how long from now (`g <ms>`, or `c <ms> <chat key>`) so every process hears of it;
 * a freeze already over (0 ms) is not published.
 */
export const FREEZE_SCRIPT: ScriptSource = {
  name: "telepacePacingFreeze",
  keys: 2,
  lua: `${PRELUDE}
local now = nowOf(ARGV[1])
local untilMs = now + tonumber(ARGV[3])
if ARGV[2] == '1' then
  local current = tonumber(redis.call('HGET', KEYS[2], 'frozen') or '')
  if current and current > untilMs then untilMs = current end
  redis.call('HSET', KEYS[2], 'frozen', fmt(untilMs))
  local need = math.ceil(untilMs - now) + 1
  if redis.call('PTTL', KEYS[2]) < need then redis.call('PEXPIRE', KEYS[2], need) end
else
  local current = tonumber(redis.call('GET', KEYS[1]) or '')
  if current and current > untilMs then untilMs = current end
  redis.call('SET', KEYS[1], fmt(untilMs), 'PX', math.ceil(untilMs - now) + 1)
end
-- A freeze that is already over (retry_after 0) holds nothing: no news for anyone.
if untilMs <= now then return 'ok' end
if ARGV[2] == '1' then
  redis.call('PUBLISH', ARGV[4], 'c ' .. fmt(untilMs - now) .. ' ' .. ARGV[5])
else
  redis.call('PUBLISH', ARGV[4], 'g ' .. fmt(untilMs - now))
end
return 'ok'
`,
};
