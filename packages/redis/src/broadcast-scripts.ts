// A broadcast's progress as Lua, one script per store call so each is atomic across the processes
// that share it, on Redis time: the broadcast's hash (fingerprint, state, end, next batch, counts),
// the leases of open batches (a sorted set of expiry times) with their owners, and a hash per open
// batch of position records. Every write to a batch checks its owner's token first.

import type { ScriptSource } from "./connection.js";

const PRELUDE = `
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function meta(key, leases)
  local fields = redis.call('HGETALL', key)
  fields[#fields + 1] = 'open'
  fields[#fields + 1] = tostring(redis.call('ZCARD', leases))
  return fields
end
local function owns(owners, batch, token)
  return redis.call('HGET', owners, batch) == token
end
local function finished(key, leases)
  local f = redis.call('HMGET', key, 'end', 'next', 'size')
  if f[1] == false or f[1] == '' then return false end
  return tonumber(f[2]) * tonumber(f[3]) >= tonumber(f[1]) and redis.call('ZCARD', leases) == 0
end
`;

/** The count field of each outcome code, and of the two flags. */
const COUNT_FIELDS = `
local FIELD = {
  ['sent'] = 'c:sent', ['blocked'] = 'c:blocked', ['deactivated'] = 'c:deactivated',
  ['forbidden'] = 'c:forbidden', ['chat-not-found'] = 'c:chatNotFound',
  ['maybe-delivered'] = 'c:maybeDelivered', ['failed'] = 'c:failed'
}
`;

/**
 * KEYS: meta, leases. ARGV: fingerprint, batch size, end ('' unknown). Creates the broadcast or
 * reads it: {'conflict'} when it exists with another fingerprint, else its fields.
 */
export const OPEN_SCRIPT: ScriptSource = {
  name: "telepaceBroadcastOpen",
  keys: 2,
  lua: `${PRELUDE}
local fp = redis.call('HGET', KEYS[1], 'fp')
if fp == false then
  redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'size', ARGV[2], 'state', 'running',
    'end', ARGV[3], 'next', '0')
elseif fp ~= ARGV[1] then
  return {'conflict'}
end
return meta(KEYS[1], KEYS[2])
`,
};

/** KEYS: meta, leases. The broadcast's fields, or an empty list when there is none. */
export const READ_SCRIPT: ScriptSource = {
  name: "telepaceBroadcastRead",
  keys: 2,
  lua: `${PRELUDE}
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
return meta(KEYS[1], KEYS[2])
`,
};

/**
 * KEYS: meta, leases, owners. ARGV: token, lease ms, the batch keys' prefix. Takes over the
 * lowest batch whose lease ran out, else claims the next one: {'claimed', batch, size, position,
 * record, …}; {'wait', ms, fields…} when every open batch is leased and none is left to claim;
 * {'stopped', fields…} when paused, cancelled or (now) completed; {'missing'}.
 */
export const CLAIM_SCRIPT: ScriptSource = {
  name: "telepaceBroadcastClaim",
  keys: 3,
  lua: `${PRELUDE}
local state = redis.call('HGET', KEYS[1], 'state')
if state == false then return {'missing'} end
local function stopped()
  local reply = {'stopped'}
  for _, v in ipairs(meta(KEYS[1], KEYS[2])) do reply[#reply + 1] = v end
  return reply
end
if state ~= 'running' then return stopped() end
local now = nowMs()
local lease = tonumber(ARGV[2])
local size = redis.call('HGET', KEYS[1], 'size')
local function claim(batch, taken)
  redis.call('ZADD', KEYS[2], now + lease, batch)
  redis.call('HSET', KEYS[3], batch, ARGV[1])
  local reply = {'claimed', batch, size}
  if taken then
    for _, v in ipairs(redis.call('HGETALL', ARGV[3] .. batch)) do reply[#reply + 1] = v end
  end
  return reply
end
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
if #expired > 0 then
  local lowest = tonumber(expired[1])
  for i = 2, #expired do lowest = math.min(lowest, tonumber(expired[i])) end
  return claim(tostring(lowest), true)
end
local f = redis.call('HMGET', KEYS[1], 'end', 'next')
if f[1] ~= '' and tonumber(f[2]) * tonumber(size) >= tonumber(f[1]) then
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if first[2] == nil then
    redis.call('HSET', KEYS[1], 'state', 'completed')
    return stopped()
  end
  local reply = {'wait', tostring(math.max(1, tonumber(first[2]) - now))}
  for _, v in ipairs(meta(KEYS[1], KEYS[2])) do reply[#reply + 1] = v end
  return reply
end
local batch = tostring(redis.call('HINCRBY', KEYS[1], 'next', 1) - 1)
return claim(batch, false)
`,
};

/** KEYS: leases, owners. ARGV: batch, token, lease ms. 1 when renewed, 0 when lost. */
export const RENEW_SCRIPT: ScriptSource = {
  name: "telepaceBroadcastRenew",
  keys: 2,
  lua: `${PRELUDE}
if not owns(KEYS[2], ARGV[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], nowMs() + tonumber(ARGV[3]), ARGV[1])
return 1
`,
};

/**
 * KEYS: owners, the batch's hash. ARGV: batch, token, position, record ('' deletes it). 'ok',
 * or 'lost' when the batch is not this token's.
 */
export const MARK_SCRIPT: ScriptSource = {
  name: "telepaceBroadcastMark",
  keys: 2,
  lua: `${PRELUDE}
if not owns(KEYS[1], ARGV[1], ARGV[2]) then return 'lost' end
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[2], ARGV[3])
else
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
end
return 'ok'
`,
};

/**
 * KEYS: meta, leases, owners, the batch's hash. ARGV: batch, token, end ('' not inside it). Adds
 * the batch's outcomes to the counts, drops its records and lease, lowers the end when given and
 * marks the broadcast completed when nothing is left: its fields, or {'lost'}.
 */
export const COMPLETE_SCRIPT: ScriptSource = {
  name: "telepaceBroadcastComplete",
  keys: 4,
  lua: `${PRELUDE}${COUNT_FIELDS}
if not owns(KEYS[3], ARGV[1], ARGV[2]) then return {'lost'} end
local records = redis.call('HVALS', KEYS[4])
for _, record in ipairs(records) do
  local outcome = string.match(record, '^[^+]+')
  local field = FIELD[outcome]
  if field then
    redis.call('HINCRBY', KEYS[1], field, 1)
    if string.find(record, '+m', 1, true) then redis.call('HINCRBY', KEYS[1], 'c:migrated', 1) end
    if string.find(record, '+r', 1, true) then
      redis.call('HINCRBY', KEYS[1], 'c:resentAfterCrash', 1)
    end
  end
end
redis.call('DEL', KEYS[4])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
if ARGV[3] ~= '' then
  local current = redis.call('HGET', KEYS[1], 'end')
  if current == '' or tonumber(ARGV[3]) < tonumber(current) then
    redis.call('HSET', KEYS[1], 'end', ARGV[3])
  end
end
if redis.call('HGET', KEYS[1], 'state') == 'running' and finished(KEYS[1], KEYS[2]) then
  redis.call('HSET', KEYS[1], 'state', 'completed')
end
return meta(KEYS[1], KEYS[2])
`,
};

/**
 * KEYS: leases, owners. ARGV: batch, token. Gives an unfinished batch back: its lease expires
 * now, so the next claim (any process's) takes it over with its records.
 */
export const RELEASE_SCRIPT: ScriptSource = {
  name: "telepaceBroadcastRelease",
  keys: 2,
  lua: `${PRELUDE}
if not owns(KEYS[2], ARGV[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], nowMs() - 1, ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
`,
};

/**
 * KEYS: meta, leases. ARGV: state (running, paused, cancelled). Completed and cancelled are
 * final. The fields, or {'missing'}.
 */
export const STATE_SCRIPT: ScriptSource = {
  name: "telepaceBroadcastState",
  keys: 2,
  lua: `${PRELUDE}
local state = redis.call('HGET', KEYS[1], 'state')
if state == false then return {'missing'} end
if state ~= 'completed' and state ~= 'cancelled' then
  redis.call('HSET', KEYS[1], 'state', ARGV[1])
end
return meta(KEYS[1], KEYS[2])
`,
};
