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
acting on an older version of the room (nor a settled end a newer commit left due again).

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

The ``PAIRING_*`` scripts keep quick pairing's pools (:mod:`server.store.pairing`). They share
one ``KEYS`` layout (all in the ``{pairing}`` slot): the liveness ZSET, the waiting seeks, the
seekers (player → seek), the pairs not yet taken, the pairing channel, and the pool's ZSET when
the script touches a pool. :data:`PAIRING_SEEK` enters a seek or pairs it at once with the best
live partner; :data:`PAIRING_MATCH` pairs what waits in one pool now that windows have widened;
:data:`PAIRING_END` ends a seek (timeout, cancel, or the pair delivered); :data:`PAIRING_REFRESH`
keeps a process's seeks alive and says which were paired or are gone; :data:`PAIRING_SWEEP`
forgets the seeks nobody kept alive; :data:`PAIRING_ANNOUNCE` publishes a pair whose room is open.

:data:`PLAYER_GAME` puts a game's summary (``server.core.summary``) on one player's lists: the
ongoing hash while it is played or waits, the finished set (newest kept, older ones and their
summaries dropped) once it is over. A game on the finished list never changes again, and an
ongoing entry is replaced only by a newer version of the room, so the writes of two processes
(or a retry) may arrive in any order. Its keys renew their expiry with every write.
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

_PAIRING_BASE = """
-- KEYS: [1] seek -> alive until (ms), [2] seek -> waiting seek (JSON), [3] player -> seek,
-- [4] seek -> its pair (JSON) until taken, [5] the pairing channel, [6] the pool (if any).
local function unmap(player, seek)
  if redis.call('HGET', KEYS[3], player) == seek then redis.call('HDEL', KEYS[3], player) end
end

local function consume(seek, player)  -- a paired seek whose seeker has been told
  redis.call('HDEL', KEYS[4], seek)
  redis.call('ZREM', KEYS[1], seek)
  unmap(player, seek)
end
"""

_PAIRING_DROP = """
local function drop(seek)  -- a waiting seek that ends unpaired: cancelled, timed out or dead
  local raw = redis.call('HGET', KEYS[2], seek)
  redis.call('ZREM', KEYS[6], seek)
  if raw then
    redis.call('HDEL', KEYS[2], seek)
    redis.call('ZREM', KEYS[1], seek)
    unmap(cjson.decode(raw).player, seek)
  end
end
"""

_PAIRING_SEARCH = """
-- ARGV: [1] now (ms), [2] '1' rated pool, [3..5] the window: base, widening per second, ms
-- until unlimited (server.core.pools.Window), [6] candidates looked at per side, [7] how long
-- a pair waits to be taken (ms).
local now = tonumber(ARGV[1])
local rated = ARGV[2] == '1'
local base, per_s, open_after = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local scan, paired_ttl = tonumber(ARGV[6]), tonumber(ARGV[7])

local function width(joined)  -- Window.width, the same operations
  local waited = now - joined
  if waited < 0 then waited = 0 end
  if waited >= open_after then return math.huge end
  return base + per_s * (waited / 1000)
end

local function alive(seek)
  local t = redis.call('ZSCORE', KEYS[1], seek)
  return t and tonumber(t) > now
end

local function waiting(seek)  -- a live waiting seek's record, else nil (a dead one is dropped)
  local raw = redis.call('HGET', KEYS[2], seek)
  if raw and alive(seek) then return cjson.decode(raw) end
  drop(seek)
  return nil
end

local function fits(a, b)
  if a.player == b.player then return false end
  if not rated then return true end
  local gap = math.abs(a.rating - b.rating)
  return gap <= width(a.joined) and gap <= width(b.joined)
end

local function bound(x)
  if x == math.huge then return '+inf' end
  if x == -math.huge then return '-inf' end
  return string.format('%.17g', x)
end

local function first_fit(me, ids)
  for _, id in ipairs(ids) do
    if id ~= me.seek then
      local rec = waiting(id)
      if rec and fits(me, rec) then return rec end
    end
  end
  return nil
end

local function best(me)  -- rated: the closest rating that fits; casual: the longest waiting
  if not rated then return first_fit(me, redis.call('ZRANGE', KEYS[6], 0, scan - 1)) end
  local w = width(me.joined)
  local up = first_fit(me, redis.call('ZRANGEBYSCORE', KEYS[6], bound(me.rating), bound(me.rating + w),
                                      'LIMIT', 0, scan))
  local down = first_fit(me, redis.call('ZREVRANGEBYSCORE', KEYS[6], bound(me.rating), bound(me.rating - w),
                                        'LIMIT', 0, scan))
  if not up then return down end
  if not down then return up end
  local gu, gd = up.rating - me.rating, me.rating - down.rating
  if gu < gd or (gu == gd and up.joined <= down.joined) then return up end
  return down
end

local function pair(a, b)  -- a's room and seat; both seeks become paired, kept until taken
  local s0, s1 = a, b
  if tonumber(a.seat) == 1 then s0, s1 = b, a end
  local text = cjson.encode({room = a.room, pool = a.pool, formed = now,
                             players = {{s0.player, s0.name, s0.seek}, {s1.player, s1.name, s1.seek}}})
  for _, rec in ipairs({a, b}) do
    redis.call('ZREM', KEYS[6], rec.seek)
    redis.call('HDEL', KEYS[2], rec.seek)
    redis.call('HSET', KEYS[4], rec.seek, text)
    redis.call('ZADD', KEYS[1], 'GT', now + paired_ttl, rec.seek)
    redis.call('HSET', KEYS[3], rec.player, rec.seek)
  end
  return text
end
"""

PAIRING_SEEK = _PAIRING_BASE + _PAIRING_DROP + _PAIRING_SEARCH + """
-- ARGV: [8] the seek (JSON: seek, player, name, pool, rating, joined, room, seat), [9] its
-- score in the pool, [10] alive until (ms).
-- The player's earlier seek: paired -> its pair is handed over; alive -> refused; dead -> forgotten.
local me = cjson.decode(ARGV[8])
local old = redis.call('HGET', KEYS[3], me.player)
if old then
  local taken = redis.call('HGET', KEYS[4], old)
  if taken then
    consume(old, me.player)
    return {'handed', taken}
  end
  if redis.call('HEXISTS', KEYS[2], old) == 1 and alive(old) then return {'already_seeking'} end
  redis.call('HDEL', KEYS[2], old)
  redis.call('ZREM', KEYS[1], old)
  redis.call('HDEL', KEYS[3], me.player)
end
local found = best(me)
if found then return {'formed', pair(me, found)} end
redis.call('ZADD', KEYS[6], ARGV[9], me.seek)
redis.call('ZADD', KEYS[1], ARGV[10], me.seek)
redis.call('HSET', KEYS[2], me.seek, ARGV[8])
redis.call('HSET', KEYS[3], me.player, me.seek)
return {'waiting'}
"""

PAIRING_MATCH = _PAIRING_BASE + _PAIRING_DROP + _PAIRING_SEARCH + """
-- ARGV: [8] how many of the pool's seeks to look at, [9] at most this many pairs.
-- The longest waiting first, each with its best partner. Answers the pairs formed (JSON).
local recs, order = {}, {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[6], 0, tonumber(ARGV[8]) - 1)) do
  local rec = waiting(id)
  if rec then
    recs[id] = rec
    order[#order + 1] = id
  end
end
table.sort(order, function(x, y)
  if recs[x].joined ~= recs[y].joined then return recs[x].joined < recs[y].joined end
  return x < y
end)
local formed = {}
for _, id in ipairs(order) do
  if #formed >= tonumber(ARGV[9]) then break end
  if redis.call('HEXISTS', KEYS[2], id) == 1 then
    local found = best(recs[id])
    if found then formed[#formed + 1] = pair(recs[id], found) end
  end
end
return formed
"""

PAIRING_END = _PAIRING_BASE + _PAIRING_DROP + """
-- ARGV: [1] the seek, [2] its player, [3] '1': its seeker is told of its pair now (take it),
-- '0': leave the pair for the player's next seek, [4] '1': tell its waiter, wherever it is.
local taken = redis.call('HGET', KEYS[4], ARGV[1])
if taken then
  if ARGV[3] == '1' then consume(ARGV[1], ARGV[2]) end
  return {'paired', taken}
end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return {'gone'} end
drop(ARGV[1])
if ARGV[4] == '1' then redis.call('PUBLISH', KEYS[5], cjson.encode({ended = ARGV[1]})) end
return {'cancelled'}
"""

PAIRING_REFRESH = """
-- KEYS: the first five of the pairing layout. ARGV: [1] alive until (ms), [2..] seeks this
-- process waits on. Answers per seek: its pair (JSON), 'w' (waiting, kept alive) or '' (gone).
local out = {}
for i = 2, #ARGV do
  local seek = ARGV[i]
  local taken = redis.call('HGET', KEYS[4], seek)
  if taken or redis.call('HEXISTS', KEYS[2], seek) == 1 then
    redis.call('ZADD', KEYS[1], 'XX', 'GT', ARGV[1], seek)
    out[#out + 1] = taken or 'w'
  else
    out[#out + 1] = ''
  end
end
return out
"""

PAIRING_SWEEP = _PAIRING_BASE + """
-- ARGV: [1] now (ms), [2] at most this many. Forgets the seeks nobody kept alive: waiting ones
-- whose process died (their pool entries go when that pool is next matched) and pairs nobody
-- took. Answers how many.
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, seek in ipairs(gone) do
  local raw = redis.call('HGET', KEYS[2], seek)
  if raw then
    redis.call('HDEL', KEYS[2], seek)
    unmap(cjson.decode(raw).player, seek)
  end
  local taken = redis.call('HGET', KEYS[4], seek)
  if taken then
    for _, p in ipairs(cjson.decode(taken).players) do
      if p[3] == seek then unmap(p[1], seek) end
    end
    redis.call('HDEL', KEYS[4], seek)
  end
  redis.call('ZREM', KEYS[1], seek)
end
return #gone
"""

PAIRING_ANNOUNCE = _PAIRING_BASE + """
-- ARGV: [1] a pair whose room is open (JSON), [2] the seek of this process's own seeker in it,
-- told now ('' = none), [3] that seeker's player. Publishes the pair to every process.
if ARGV[2] ~= '' then consume(ARGV[2], ARGV[3]) end
redis.call('PUBLISH', KEYS[5], ARGV[1])
return 1
"""

PLAYER_GAME = """
-- KEYS: the player's ongoing games, finished games, finished games' summaries.
-- ARGV: room id, room version, summary (JSON), '1' if the game is over, its end (ms), how many
-- finished games are kept, the keys' lifetime (ms; '' = no expiry).
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
if ARGV[4] == '1' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
  local beyond = -tonumber(ARGV[6]) - 1
  local dropped = redis.call('ZRANGE', KEYS[2], 0, beyond)
  if #dropped > 0 then
    redis.call('ZREMRANGEBYRANK', KEYS[2], 0, beyond)
    redis.call('HDEL', KEYS[3], unpack(dropped))
  end
else
  local cur = redis.call('HGET', KEYS[1], ARGV[1])
  if cur and tonumber(cjson.decode(cur)['v']) >= tonumber(ARGV[2]) then return 0 end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
if ARGV[7] ~= '' then
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[7]) end
end
return 1
"""
