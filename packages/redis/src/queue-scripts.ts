// The shared update queue as Lua: one FIFO list per principal, a ready set of principals ordered by
// their oldest waiting update, and leases (expiry in Redis time, a fencing token per claim; the
// worker's scripts are in claim-scripts.ts). An update stays at the head of its list until
// completed, so a principal whose lease expires is handed on with the interrupted update first.

import type { ScriptSource } from "./connection.js";

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
