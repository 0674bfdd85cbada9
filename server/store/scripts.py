"""The Lua scripts: each runs atomically in Redis and declares every key it touches.

:data:`COMMIT` is the one compare-and-set of a room change: only if the stored version is
still the expected one does it write the state, append to the log, update the clock
deadline, renew the room's retention (``EXPIRE`` on its state and log) and publish. Two
processes can never both commit version N. ``KEYS``: state, log, channel, clocks.
``ARGV``: expected version (``-1`` = must not exist), new version, packed room, log entry,
pub/sub message, room id, deadline ms (``''`` = none), TTL s (``''`` = keep).

:data:`SOLO_RESULT` records a won classic game on the all-time and the day's leaderboards of
its preset and mode (each kept to its best entries) and as the player's best if it is one.

:data:`PRESENCE` sets this process's spectator count for a room (the field expires if the
process dies) and returns, optionally publishes, the total over processes.
"""

COMMIT = """
local cur = redis.call('HGET', KEYS[1], 'v')
if ARGV[1] == '-1' then
  if cur then return {0, cur} end
elseif cur ~= ARGV[1] then
  return {0, cur or ''}
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'data', ARGV[3])
redis.call('RPUSH', KEYS[2], ARGV[4])
if ARGV[7] == '' then
  redis.call('ZREM', KEYS[4], ARGV[6])
else
  redis.call('ZADD', KEYS[4], ARGV[7], ARGV[6])
end
if ARGV[8] ~= '' then
  redis.call('EXPIRE', KEYS[1], ARGV[8])
  redis.call('EXPIRE', KEYS[2], ARGV[8])
end
redis.call('PUBLISH', KEYS[3], ARGV[5])
return {1, ARGV[2]}
"""

PRESENCE = """
if tonumber(ARGV[2]) > 0 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  local ok = pcall(redis.call, 'HEXPIRE', KEYS[1], ARGV[3], 'FIELDS', 1, ARGV[1])
  if not ok then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
local total = 0
for _, n in ipairs(redis.call('HVALS', KEYS[1])) do total = total + tonumber(n) end
if ARGV[4] == '1' then redis.call('PUBLISH', KEYS[2], 'P' .. total) end
return total
"""

SOLO_RESULT = """
-- KEYS: all-time board, the day's board, the player's bests. ARGV: result (JSON, unique per
-- game), time ms, keep, day TTL s, the board's field name in the bests.
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], ARGV[3], -1)
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[2], ARGV[3], -1)
redis.call('EXPIRE', KEYS[2], ARGV[4])
local best = redis.call('HGET', KEYS[3], ARGV[5])
if (not best) or tonumber(cjson.decode(best)['time_ms']) > tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[3], ARGV[5], ARGV[1])
  return 1
end
return 0
"""
