"""Scripts of players: names, ratings, their games and the classic game's results.

:data:`NAME_CLAIM` gives a player a name that no other player holds in any case or width: it
claims the new name's key in one step, so two players racing for one name cannot both win. A
name given up in a rename stays claimed by its player (who may take it back): the games played
under it keep showing it, and nobody else may then pass for their player (an outside probe saw
a leaderboard game credited to a name a new guest had taken since).

:data:`RATING_RESULT` writes one rated game's new ratings (computed in Python by the library
from the ratings read before), exactly once per game: only if the game is not marked applied,
has not outlived its mark, and both players' stored ratings are still the ones read
(compare-and-set on the stored text, which grows a game count each time); else it writes
nothing and says why (the caller reads again after ``stale``).

:data:`PLAYER_GAME` puts a game's summary (``server.core.summary``) on one player's lists: the
ongoing hash while it is played or waits, the finished set (newest kept, older ones and their
summaries dropped) once it is over; a challenge called off before anybody took it leaves both.
A game on the finished list never changes again, and an ongoing entry is replaced only by a
newer version of the room, so the writes of two processes (or a retry) may arrive in any order.
Its keys renew their expiry with every write.


:data:`SOLO_RESULT` records a won classic game on the all-time and the day's leaderboards of
its preset and mode (each kept to its best entries) and as the player's best if it is one, and
says where the game stands after it (the player's best, on either board), so that its caller
keeps the game's room as long as a board or the bests link to it
(:meth:`server.store.store.Store.record_solo`).
"""

NAME_CLAIM = """
-- KEYS: the player's record, the claimed names. ARGV: player id, name, the name's key,
-- '1' if the player must already have a name (a rename).
if ARGV[4] == '1' and not redis.call('HGET', KEYS[1], 'key') then return 'unknown' end
local owner = redis.call('HGET', KEYS[2], ARGV[3])
if owner and owner ~= ARGV[1] then return 'taken' end
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

PLAYER_GAME = """
-- KEYS: the player's ongoing games, finished games, finished games' summaries.
-- ARGV: room id, room version, summary (JSON), '1' if the game is over ('-' if it ended
-- without an opponent: off the lists), its end (ms), how many finished games are kept, the
-- keys' lifetime (ms; '' = no expiry).
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
if ARGV[4] == '-' then
  redis.call('HDEL', KEYS[1], ARGV[1])
elseif ARGV[4] == '1' then
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

SOLO_RESULT = """
-- KEYS: all-time board, the day's board, the player's bests. ARGV: result (JSON, unique per
-- game), time ms, keep, day TTL s, the board's field name in the bests, '1' if the stored best
-- is to be replaced whatever its time (it is not at a person's pace: no best at all).
-- Returns {best, on the all-time board, on the day's board} (1 or 0 each, after trimming; the
-- same when called again for the same result).
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], ARGV[3], -1)
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[2], ARGV[3], -1)
redis.call('EXPIRE', KEYS[2], ARGV[4])
local on_all = redis.call('ZSCORE', KEYS[1], ARGV[1]) and 1 or 0
local on_day = redis.call('ZSCORE', KEYS[2], ARGV[1]) and 1 or 0
local best = redis.call('HGET', KEYS[3], ARGV[5])
if best == ARGV[1] then return {1, on_all, on_day} end
if (not best) or ARGV[6] == '1' or tonumber(cjson.decode(best)['time_ms']) > tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[3], ARGV[5], ARGV[1])
  return {1, on_all, on_day}
end
return {0, on_all, on_day}
"""
