"""The Lua scripts: each runs atomically in Redis and declares every key it touches.

:data:`COMMIT` is the one compare-and-set of a room change: only if the stored version is
still the expected one does it write the state, append to the log, update the clock
deadline, renew the room's retention (``EXPIRE`` on its state and log, and on its analysis,
which exists only after the end) and publish. Two processes can never both commit version N.
``KEYS``: state, log, channel, clocks, analysis.
``ARGV``: expected version (``-1`` = must not exist), new version, packed room, log entry,
pub/sub message, room id, deadline ms (``''`` = none), TTL s (``''`` = keep).

:data:`KEEP_ANALYSIS` stores a finished game's analysis once, expiring with the room's state
(the same time left; none if the state has none): the first writer wins and later ones get
its bytes back; nothing is stored for a room that is gone.

:data:`DROP_DUE` takes a room out of the ``clocks`` set only if its due time is still the one
the sweeper read: a commit made since (a new due time, or none) is never undone by a sweeper
acting on an older version of the room.

:data:`SOLO_RESULT` records a won classic game on the all-time and the day's leaderboards of
its preset and mode (each kept to its best entries) and as the player's best if it is one.

:data:`PRESENCE` sets this process's spectator count for a room (the field expires if the
process dies) and returns, optionally publishes, the total over processes.

:data:`NAME_CLAIM` gives a player a name that no other player holds in any case or width: it
claims the new name's key and frees the player's old one in the same step, so two players
racing for one name cannot both win and a rename never leaves a name claimed twice.

:data:`RATING_RESULT` writes one rated game's new ratings (computed in Python by the library
from the ratings read before), exactly once per game: only if the game is not marked applied,
has not outlived its mark, and both players' stored ratings are still the ones read
(compare-and-set on the stored text, which grows a game count each time); else it writes
nothing and says why (the caller reads again after ``stale``).
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
  redis.call('EXPIRE', KEYS[5], ARGV[8])
end
redis.call('PUBLISH', KEYS[3], ARGV[5])
return {1, ARGV[2]}
"""

KEEP_ANALYSIS = """
-- KEYS: the room's state, its analysis. ARGV: the analysis.
-- Returns 1 (stored), 0 (the room is gone: nothing stored) or the analysis stored before.
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return 0 end
local old = redis.call('GET', KEYS[2])
if old then return old end
if ttl > 0 then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
else
  redis.call('SET', KEYS[2], ARGV[1])
end
return 1
"""

DROP_DUE = """
-- KEYS: clocks. ARGV: room id, the due time read (ms).
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if due and tonumber(due) == tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
"""

PRESENCE = """
-- KEYS: the room's presence hash, its channel. ARGV: process id, its spectators, field TTL s,
-- publish?, its connections of seat 0, of seat 1, now ms, the hash's TTL s.
-- Fields: <process> (spectators), <process>:<seat> (that seat's connections), each expiring
-- with its process; away:<seat>, since when the seat has had no connection anywhere.
local function put(field, n)
  if tonumber(n) > 0 then
    redis.call('HSET', KEYS[1], field, n)
    local ok = pcall(redis.call, 'HEXPIRE', KEYS[1], ARGV[3], 'FIELDS', 1, field)
    if not ok then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
  else
    redis.call('HDEL', KEYS[1], field)
  end
end
put(ARGV[1], ARGV[2])
put(ARGV[1] .. ':0', ARGV[5])
put(ARGV[1] .. ':1', ARGV[6])
local spectators, seats = 0, {0, 0}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local field, n = all[i], tonumber(all[i + 1])
  if string.sub(field, 1, 5) ~= 'away:' then
    local seat = string.match(field, ':(%d)$')
    if seat then seats[tonumber(seat) + 1] = seats[tonumber(seat) + 1] + n else spectators = spectators + n end
  end
end
local away = {}
for seat = 0, 1 do
  local field = 'away:' .. seat
  if seats[seat + 1] > 0 then
    redis.call('HDEL', KEYS[1], field)
    away[seat + 1] = '-'
  else
    redis.call('HSETNX', KEYS[1], field, ARGV[7])
    away[seat + 1] = redis.call('HGET', KEYS[1], field)
  end
end
if redis.call('TTL', KEYS[1]) < tonumber(ARGV[8]) then redis.call('EXPIRE', KEYS[1], ARGV[8]) end
local text = spectators .. ':' .. away[1] .. ':' .. away[2]
if ARGV[4] == '1' then redis.call('PUBLISH', KEYS[2], 'P' .. text) end
return text
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

NAME_CLAIM = """
-- KEYS: the player's record, the claimed names. ARGV: player id, name, the name's key,
-- '1' if the player must already have a name (a rename).
local old = redis.call('HGET', KEYS[1], 'key')
if ARGV[4] == '1' and not old then return 'unknown' end
local owner = redis.call('HGET', KEYS[2], ARGV[3])
if owner and owner ~= ARGV[1] then return 'taken' end
if old and old ~= ARGV[3] and redis.call('HGET', KEYS[2], old) == ARGV[1] then
  redis.call('HDEL', KEYS[2], old)
end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[1], 'name', ARGV[2], 'key', ARGV[3])
return 'ok'
"""

RATING_RESULT = """
-- KEYS: the game's mark, the ratings of seat 0 and seat 1, their histories, the leaderboard.
-- ARGV: the category, the ratings read for seat 0 and seat 1 ('' = none), their new ratings,
-- their history entries, their leaderboard scores ('' = provisional: off the board), the
-- player ids, history length kept, the game's end (ms), the mark's lifetime after it (ms).
if redis.call('EXISTS', KEYS[1]) == 1 then return 'duplicate' end
local t = redis.call('TIME')
local expires = tonumber(ARGV[13]) + tonumber(ARGV[14])
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) >= expires then return 'expired' end
for seat = 0, 1 do
  local cur = redis.call('HGET', KEYS[2 + seat], ARGV[1]) or ''
  if cur ~= ARGV[2 + seat] then return 'stale' end
end
redis.call('SET', KEYS[1], '1', 'PXAT', expires)
for seat = 0, 1 do
  redis.call('HSET', KEYS[2 + seat], ARGV[1], ARGV[4 + seat])
  redis.call('RPUSH', KEYS[4 + seat], ARGV[6 + seat])
  redis.call('LTRIM', KEYS[4 + seat], -tonumber(ARGV[12]), -1)
  if ARGV[8 + seat] == '' then
    redis.call('ZREM', KEYS[6], ARGV[10 + seat])
  else
    redis.call('ZADD', KEYS[6], ARGV[8 + seat], ARGV[10 + seat])
  end
end
return 'applied'
"""
