// The job registry as Lua: a job's record, its owner (the process running it) with a lease that
// the owner renews, its progress and a cancel flag any process may set. A lease that runs out
// (the owner died, or lost Redis for longer than the lease) lets the next process that renews
// take the job over, so that it can end it for its user.

import type { ScriptSource } from "./connection.js";

const NOW = `
local function fmt(x) return string.format('%.3f', x) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
`;

/**
 * KEYS: records, owners, leases, cancellable (job → who may cancel), progress, cancels.
 * ARGV: id, owner, leaseMs, JSON record, who may cancel ('' : anyone).
 */
export const JOB_ADD_SCRIPT: ScriptSource = {
  name: "telepaceJobAdd",
  keys: 6,
  lua: `${NOW}
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], fmt(now + tonumber(ARGV[3])), ARGV[1])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[4], ARGV[1], ARGV[5]) end
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('SREM', KEYS[6], ARGV[1])
return 1
`,
};

/**
 * KEYS: as add. ARGV: owner, leaseMs, most to take over, then (id, progress or '') per job the
 * owner runs. Extends the owner's leases and stores their progress; then takes over jobs whose
 * lease ran out. Returns {cancelled ids}, {lost ids}, {taken: id, JSON, progress or ''…}.
 */
export const JOB_RENEW_SCRIPT: ScriptSource = {
  name: "telepaceJobRenew",
  keys: 6,
  lua: `${NOW}
local owner = ARGV[1]
local leaseEnd = fmt(now + tonumber(ARGV[2]))
local cancelled, lost, taken = {}, {}, {}
for i = 4, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HGET', KEYS[2], id) == owner then
    redis.call('ZADD', KEYS[3], leaseEnd, id)
    if ARGV[i + 1] ~= '' then redis.call('HSET', KEYS[5], id, ARGV[i + 1]) end
    if redis.call('SISMEMBER', KEYS[6], id) == 1 then cancelled[#cancelled + 1] = id end
  else
    lost[#lost + 1] = id
  end
end
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', fmt(now), 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(expired) do
  local record = redis.call('HGET', KEYS[1], id)
  if record then
    redis.call('HSET', KEYS[2], id, owner)
    redis.call('ZADD', KEYS[3], leaseEnd, id)
    taken[#taken + 1] = id
    taken[#taken + 1] = record
    taken[#taken + 1] = redis.call('HGET', KEYS[5], id) or ''
  else
    redis.call('ZREM', KEYS[3], id)
  end
end
return {cancelled, lost, taken}
`,
};

/** KEYS: as add. ARGV: id, owner. Removes the job if the owner still holds it: 1, else 0. */
export const JOB_REMOVE_SCRIPT: ScriptSource = {
  name: "telepaceJobRemove",
  keys: 6,
  lua: `
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('SREM', KEYS[6], ARGV[1])
return 1
`,
};

/**
 * KEYS: as add. ARGV: id, who asks. Sets the job's cancel flag for its owner to hear at its next
 * renewal. Returns 'requested', 'not-found' (no such job: it ended) or 'not-allowed'.
 */
export const JOB_CANCEL_SCRIPT: ScriptSource = {
  name: "telepaceJobCancel",
  keys: 6,
  lua: `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 'not-found' end
local allowed = redis.call('HGET', KEYS[4], ARGV[1])
if allowed and allowed ~= ARGV[2] then return 'not-allowed' end
redis.call('SADD', KEYS[6], ARGV[1])
return 'requested'
`,
};
