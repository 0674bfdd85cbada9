"""Scripts of one room (its hash-tagged keys, and its due index: ``clocks:{<tag>}`` of its slot).

:data:`COMMIT` is the one compare-and-set of a room change: only if the stored version is
still the expected one does it write the state, append to the log, update the clock
deadline, renew the room's retention (``EXPIRE`` on its state and log, and on its analysis,
which exists only after the end) and publish. Two processes can never both commit version N.
``KEYS``: state, log, channel, the room's due index (:func:`server.store.keys.clock_key`), analysis.
``ARGV``: expected version (``-1`` = must not exist), new version, packed room, log entry,
pub/sub message, room id, deadline ms (``''`` = none; ``'keep'``: the room's entry stays as it
is), TTL s (``''`` = keep), and (optional) the committing process's link channel
(:func:`server.store.keys.link_channel`) when that process counts itself among the room
channel's subscribers (``''`` or absent: it does not).
Returns ``{1, version, published}`` or ``{0, stored version or ''}``.

Why the link channel: the message is published only if somebody other than the committer
hears it (``PUBSUB NUMSUB`` of the room's channel, less the committer's own subscription), and
the committer then delivers the new version to its own connections itself. With one process
that is every commit: no message, and no read of it, per move (docs/PERFORMANCE.md,
twenty-fourth session). The committer's own subscription is taken off only while its link
channel has a subscriber: that channel and the room's are subscribed on the same connection,
so a link Valkey has dropped (which the process may not have noticed yet) takes both away,
and the message then goes to whoever else listens. ``NUMSUB`` counts subscribers by channel
name on this server: pattern subscribers, and (on a cluster) those of other nodes, are not
counted.

:data:`KEEP_ANALYSIS` stores a finished game's analysis once, expiring with the room's state
(the same time left; none if the state has none): the first writer wins and later ones get
its bytes back; nothing is stored for a room that is gone.

:data:`DROP_DUE` takes a room out of its due index only if its due time is still the one
the sweeper read: a commit made since (a new due time, or none) is never undone by a sweeper
acting on an older version of the room (nor a settled end a newer commit left due again).

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
elseif ARGV[7] ~= 'keep' then
  redis.call('ZADD', KEYS[4], ARGV[7], ARGV[6])
end
if ARGV[8] ~= '' then
  redis.call('EXPIRE', KEYS[1], ARGV[8])
  redis.call('EXPIRE', KEYS[2], ARGV[8])
  redis.call('EXPIRE', KEYS[5], ARGV[8])
end
local others = redis.call('PUBSUB', 'NUMSUB', KEYS[3])[2]
local own = ARGV[9]
if own and own ~= '' and redis.call('PUBSUB', 'NUMSUB', own)[2] > 0 then
  others = others - 1
end
if others > 0 then
  redis.call('PUBLISH', KEYS[3], ARGV[5])
  return {1, ARGV[2], 1}
end
return {1, ARGV[2], 0}
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
-- KEYS: the room's due index. ARGV: room id, the due time read (ms).
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
