"""Quick pairing's scripts (all in the ``{pairing}`` slot).

The ``PAIRING_*`` scripts keep quick pairing's pools (:mod:`server.store.pairing`). They share
one ``KEYS`` layout (all in the ``{pairing}`` slot): the liveness ZSET, the waiting seeks, the
seekers (player → seek), the pairs not yet taken, the pairing channel, and the pool's ZSET when
the script touches a pool. :data:`PAIRING_SEEK` enters a seek or pairs it at once with the best
live partner; :data:`PAIRING_MATCH` pairs what waits in one pool now that windows have widened;
:data:`PAIRING_END` ends a seek (timeout, cancel, or its pair taken once delivered); :data:`PAIRING_REFRESH`
keeps a process's seeks alive and says which were paired or are gone; :data:`PAIRING_SWEEP`
forgets the seeks nobody kept alive; :data:`PAIRING_ANNOUNCE` publishes a pair whose room is open.
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
-- The player's earlier seek: paired -> its pair is handed over (not taken: it stays until its
-- seeker is told, PAIRING_END with take, so an answer that never arrived loses nothing); alive ->
-- refused; dead -> forgotten.
local me = cjson.decode(ARGV[8])
local old = redis.call('HGET', KEYS[3], me.player)
if old then
  local taken = redis.call('HGET', KEYS[4], old)
  if taken then return {'handed', taken} end
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
