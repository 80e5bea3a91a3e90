// The worker's side of the shared update queue as Lua: claim a ready principal under a lease,
// complete its head update, extend leases. Each claim carries the caller's claim id, so a call
// whose answer was lost (a timeout while Redis stalled, Redis still running it later) can be
// asked again and answers the same claim; a completion remembers it was done, so asking again
// does not look like a lost lease. A chat's principals hold at most `maxPerChat` leases at once,
// across every worker: the rest wait, parked per chat, and a chat that waits (a freeze, its
// pacing) cannot take every worker's capacity from the others.

import type { ScriptSource } from "./connection.js";

const NOW = `
local function fmt(x) return string.format('%.3f', x) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
`;

/** How long a completed claim is remembered for a repeated `complete`, ms. */
export const COMPLETED_CLAIMS_KEPT_MS = 60_000;

/**
 * Shared by claim and complete. KEYS[1..4]: ready, leases, owners, claims (claim token →
 * principal); KEYS[5..6]: chat load (chat → leases), lease chats (leased principal → its chat).
 * ARGV[1]: the parked prefix (`<prefix><chat>` zsets of principals waiting for their chat),
 * ARGV[2]: the list prefix.
 */
const RELEASE = `
local function release(principal)
  local token = redis.call('HGET', KEYS[3], principal)
  redis.call('ZREM', KEYS[2], principal)
  redis.call('HDEL', KEYS[3], principal)
  if token then redis.call('HDEL', KEYS[4], token) end
  local chat = redis.call('HGET', KEYS[6], principal)
  if not chat then return end
  redis.call('HDEL', KEYS[6], principal)
  if redis.call('HINCRBY', KEYS[5], chat, -1) <= 0 then redis.call('HDEL', KEYS[5], chat) end
  -- The chat has room for one more: its longest-waiting parked principal is ready again (one
  -- that was claimed meanwhile through a newer update is passed over).
  for _ = 1, 100 do
    local parked = redis.call('ZPOPMIN', ARGV[1] .. chat)
    if not parked[1] then return end
    if redis.call('LINDEX', ARGV[2] .. parked[1], 0) and not redis.call('ZSCORE', KEYS[2], parked[1]) then
      redis.call('ZADD', KEYS[1], 'NX', parked[2], parked[1])
      return
    end
  end
end
`;

/**
 * KEYS: ready, leases, owners, claims, chat load, lease chats, updates, deliveries.
 * ARGV: parked prefix, list prefix, leaseMs, claim token, maxPerChat (0: no bound).
 * A token that already holds a lease answers that claim again (its lease extended). Otherwise
 * expired leases are handed back to ready (head first), then the principal with the oldest
 * waiting update whose chat has room is leased. Returns {handedOver} or {handedOver, principal,
 * id, JSON, deliveries}.
 */
export const CLAIM_SCRIPT: ScriptSource = {
  name: "telepaceQueueClaim",
  keys: 8,
  lua: `${NOW}${RELEASE}
local prefix = ARGV[2]
local leaseMs = tonumber(ARGV[3])
local token = ARGV[4]
local maxPerChat = tonumber(ARGV[5])
local held = redis.call('HGET', KEYS[4], token)
if held then
  if redis.call('HGET', KEYS[3], held) == token then
    local head = redis.call('LINDEX', prefix .. held, 0)
    if head then
      redis.call('ZADD', KEYS[2], fmt(now + leaseMs), held)
      return {0, held, head, redis.call('HGET', KEYS[7], head), redis.call('HGET', KEYS[8], head)}
    end
  end
  redis.call('HDEL', KEYS[4], token)
end
local handed = 0
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', fmt(now), 'LIMIT', 0, 100)
for _, principal in ipairs(expired) do
  release(principal)
  local head = redis.call('LINDEX', prefix .. principal, 0)
  if head then redis.call('ZADD', KEYS[1], head, principal) end
  handed = handed + 1
end
-- The chat an update writes to: its payload's chat, or a callback's message's chat.
local function chatOf(id)
  local ok, update = pcall(cjson.decode, redis.call('HGET', KEYS[7], id) or '')
  if not ok or type(update) ~= 'table' then return nil end
  for field, payload in pairs(update) do
    if field ~= 'update_id' and type(payload) == 'table' then
      local chat = payload.chat
      if type(chat) ~= 'table' and type(payload.message) == 'table' then chat = payload.message.chat end
      if type(chat) == 'table' and type(chat.id) == 'number' then return string.format('%.0f', chat.id) end
    end
  end
  return nil
end
for _ = 1, 100 do
  local popped = redis.call('ZPOPMIN', KEYS[1])
  if #popped == 0 then break end
  local principal = popped[1]
  local head = redis.call('LINDEX', prefix .. principal, 0)
  -- A principal leased meanwhile (it was parked and ready at once) waits for its completion.
  if head and not redis.call('ZSCORE', KEYS[2], principal) then
    local chat = nil
    if maxPerChat > 0 then chat = chatOf(head) end
    if chat and tonumber(redis.call('HGET', KEYS[5], chat) or '0') >= maxPerChat then
      redis.call('ZADD', ARGV[1] .. chat, 'NX', popped[2], principal)
    else
      redis.call('ZADD', KEYS[2], fmt(now + leaseMs), principal)
      redis.call('HSET', KEYS[3], principal, token)
      redis.call('HSET', KEYS[4], token, principal)
      if chat then
        redis.call('HSET', KEYS[6], principal, chat)
        redis.call('HINCRBY', KEYS[5], chat, 1)
      end
      local deliveries = redis.call('HINCRBY', KEYS[8], head, 1)
      return {handed, principal, head, redis.call('HGET', KEYS[7], head), deliveries}
    end
  end
end
return {handed}
`,
};

/**
 * KEYS: ready, leases, owners, claims, chat load, lease chats, updates, deliveries, count,
 * completed (zset of claim tokens by when). ARGV: parked prefix, list prefix, principal, token,
 * id. Finishes the head update and releases the lease, the principal's next update becoming
 * ready. Returns 1 (done now, or by an earlier call with this token), 2 (the token had lost the
 * lease and the update was finished by another claim) or 0 (the lease was lost and the update
 * stays: another worker runs it again, at least once).
 */
export const COMPLETE_SCRIPT: ScriptSource = {
  name: "telepaceQueueComplete",
  keys: 10,
  lua: `${NOW}${RELEASE}
local principal = ARGV[3]
local token = ARGV[4]
local id = ARGV[5]
redis.call('ZREMRANGEBYSCORE', KEYS[10], '-inf', fmt(now - ${COMPLETED_CLAIMS_KEPT_MS}))
if redis.call('HGET', KEYS[3], principal) ~= token then
  if redis.call('ZSCORE', KEYS[10], token) then return 1 end
  if redis.call('HEXISTS', KEYS[7], id) == 0 then return 2 end
  return 0
end
local list = ARGV[2] .. principal
if redis.call('LINDEX', list, 0) == id then
  redis.call('LPOP', list)
  redis.call('HDEL', KEYS[7], id)
  redis.call('HDEL', KEYS[8], id)
  if tonumber(redis.call('GET', KEYS[9]) or '0') > 0 then redis.call('DECR', KEYS[9]) end
end
release(principal)
redis.call('ZADD', KEYS[10], fmt(now), token)
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
 * KEYS: owners, updates. ARGV: list prefix, worker id. The head update of every principal whose
 * lease token is the worker's (`<worker id>:<claim id>`), expired or not: what it was running.
 * Returns {principal, JSON} pairs.
 */
export const OWNED_SCRIPT: ScriptSource = {
  name: "telepaceQueueOwned",
  keys: 2,
  lua: `
local reply = {}
local owners = redis.call('HGETALL', KEYS[1])
local mine = ARGV[2] .. ':'
for i = 1, #owners, 2 do
  local token = owners[i + 1]
  local rest = string.sub(token, #mine + 1)
  if string.sub(token, 1, #mine) == mine and not string.find(rest, ':', 1, true) then
    local head = redis.call('LINDEX', ARGV[1] .. owners[i], 0)
    local json = head and redis.call('HGET', KEYS[2], head)
    if json then
      reply[#reply + 1] = owners[i]
      reply[#reply + 1] = json
    end
  end
end
return reply
`,
};
