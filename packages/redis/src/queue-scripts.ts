// The shared update queue as Lua: one FIFO list per principal, a ready set of principals ordered by
// their oldest waiting update, and leases (expiry in Redis time, a fencing token per claim). An
// update stays at the head of its list until completed, so a principal whose lease expires is
// handed on with the interrupted update first.

import type { ScriptSource } from "./connection.js";

const NOW = `
local function fmt(x) return string.format('%.3f', x) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
`;

/**
 * KEYS: seen (zset of update ids), highest, updates (hash id → JSON), ready, leases, count.
 * ARGV: maxUnfinished, dedupeLimit, list prefix, then (id, principal, JSON) per update, ascending.
 * Stores updates in order until the bound; returns {duplicates, highest, stored ids…}. `highest`
 * only passes updates stored or known, so the ones that did not fit are fetched again.
 */
export const APPEND_SCRIPT: ScriptSource = {
  name: "telepaceQueueAppend",
  keys: 6,
  lua: `
local maxUnfinished = tonumber(ARGV[1])
local dedupeLimit = tonumber(ARGV[2])
local prefix = ARGV[3]
local count = tonumber(redis.call('GET', KEYS[6]) or '0')
local highest = tonumber(redis.call('GET', KEYS[2]) or '-1')
local duplicates = 0
local stored = {}
for i = 4, #ARGV, 3 do
  local id = ARGV[i]
  local principal = ARGV[i + 1]
  if redis.call('ZSCORE', KEYS[1], id) then
    duplicates = duplicates + 1
  else
    if count >= maxUnfinished then break end
    redis.call('ZADD', KEYS[1], id, id)
    redis.call('HSET', KEYS[3], id, ARGV[i + 2])
    redis.call('RPUSH', prefix .. principal, id)
    -- Ready unless a worker holds it; NX keeps the score of an older waiting head.
    if not redis.call('ZSCORE', KEYS[5], principal) then
      redis.call('ZADD', KEYS[4], 'NX', id, principal)
    end
    count = count + 1
    stored[#stored + 1] = id
  end
  if tonumber(id) > highest then highest = tonumber(id) end
end
redis.call('SET', KEYS[6], count)
if highest >= 0 then redis.call('SET', KEYS[2], highest) end
local size = redis.call('ZCARD', KEYS[1])
if size > dedupeLimit then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, size - dedupeLimit - 1) end
local reply = {duplicates, highest}
for _, id in ipairs(stored) do reply[#reply + 1] = id end
return reply
`,
};

/**
 * KEYS: seen, highest, count. A new numbering of update ids: forgets every stored id and the
 * highest one, and returns 1; returns 0, changing nothing, while any stored update is unfinished
 * (a new id could collide with it).
 */
export const RESTART_IDS_SCRIPT: ScriptSource = {
  name: "telepaceQueueRestartIds",
  keys: 3,
  lua: `
if tonumber(redis.call('GET', KEYS[3]) or '0') > 0 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
`,
};

/**
 * KEYS: ready, leases, owners (hash principal → token), updates, deliveries (hash id → count),
 * token counter. ARGV: leaseMs, list prefix, worker id.
 * First hands expired leases back to ready (head first), then takes the principal with the oldest
 * waiting update. Returns {handedOver} or {handedOver, principal, id, JSON, deliveries, token}.
 */
export const CLAIM_SCRIPT: ScriptSource = {
  name: "telepaceQueueClaim",
  keys: 6,
  lua: `${NOW}
local leaseMs = tonumber(ARGV[1])
local prefix = ARGV[2]
local handed = 0
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', fmt(now), 'LIMIT', 0, 100)
for _, principal in ipairs(expired) do
  redis.call('ZREM', KEYS[2], principal)
  redis.call('HDEL', KEYS[3], principal)
  local head = redis.call('LINDEX', prefix .. principal, 0)
  if head then redis.call('ZADD', KEYS[1], head, principal) end
  handed = handed + 1
end
while true do
  local popped = redis.call('ZPOPMIN', KEYS[1])
  if #popped == 0 then return {handed} end
  local principal = popped[1]
  local head = redis.call('LINDEX', prefix .. principal, 0)
  if head then
    local token = ARGV[3] .. ':' .. redis.call('INCR', KEYS[6])
    redis.call('ZADD', KEYS[2], fmt(now + leaseMs), principal)
    redis.call('HSET', KEYS[3], principal, token)
    local deliveries = redis.call('HINCRBY', KEYS[5], head, 1)
    return {handed, principal, head, redis.call('HGET', KEYS[4], head), deliveries, token}
  end
end
`,
};

/**
 * KEYS: ready, leases, owners, updates, deliveries, count. ARGV: principal, token, id, list prefix.
 * Finishes the head update and releases the lease, the principal's next update becoming ready.
 * Returns 1, or 0 when the token no longer holds the lease (the update stays: another worker
 * runs it again, at least once).
 */
export const COMPLETE_SCRIPT: ScriptSource = {
  name: "telepaceQueueComplete",
  keys: 6,
  lua: `
local principal = ARGV[1]
if redis.call('HGET', KEYS[3], principal) ~= ARGV[2] then return 0 end
local list = ARGV[4] .. principal
if redis.call('LINDEX', list, 0) == ARGV[3] then
  redis.call('LPOP', list)
  redis.call('HDEL', KEYS[4], ARGV[3])
  redis.call('HDEL', KEYS[5], ARGV[3])
  if tonumber(redis.call('GET', KEYS[6]) or '0') > 0 then redis.call('DECR', KEYS[6]) end
end
redis.call('ZREM', KEYS[2], principal)
redis.call('HDEL', KEYS[3], principal)
local nextId = redis.call('LINDEX', list, 0)
if nextId then redis.call('ZADD', KEYS[1], nextId, principal) end
return 1
`,
};

/**
 * KEYS: leases, owners. ARGV: leaseMs, then (principal, token) pairs. Extends each lease the
 * token still holds; returns 1 or 0 per pair.
 */
export const HEARTBEAT_SCRIPT: ScriptSource = {
  name: "telepaceQueueHeartbeat",
  keys: 2,
  lua: `${NOW}
local reply = {}
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[i + 1] then
    redis.call('ZADD', KEYS[1], 'XX', fmt(now + tonumber(ARGV[1])), ARGV[i])
    reply[#reply + 1] = 1
  else
    reply[#reply + 1] = 0
  end
end
return reply
`,
};

/**
 * A named lease (the poller's): KEYS: lease. ARGV: token, leaseMs, mode ('take' | 'renew' |
 * 'release'). Take succeeds when free or already ours; renew only when ours; release deletes ours.
 * Returns 1 when the caller holds (or released) it, else 0.
 */
export const LEASE_SCRIPT: ScriptSource = {
  name: "telepaceLease",
  keys: 1,
  lua: `
local holder = redis.call('GET', KEYS[1])
local mode = ARGV[3]
if mode == 'release' then
  if holder == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
  return 0
end
if holder == ARGV[1] or (mode == 'take' and not holder) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`,
};
