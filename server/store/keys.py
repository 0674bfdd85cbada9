"""Redis keys and channels. Every key of a room carries the hash tag ``{<room id>}``, so a room
lives in one Redis Cluster slot and its commit script touches one slot.

=========================  ======  ==========================================================
key                        type    content
=========================  ======  ==========================================================
``game:{id}:state``        hash    ``v`` (version) and ``data`` (msgpack of ``Room.to_data()``)
``game:{id}:log``          list    one msgpack ``[v, kind, data]`` per committed change
``game:{id}:events``       chan    commit messages ``[b"commit", v, room, events, nonce]``;
                                   presence ``P<n>``
``game:{id}:watchers``     hash    spectators per server process (fields expire if it dies)
``game:{id}:analysis``     string  a finished duel's analysis (msgpack, :mod:`server.store.analyses`);
                                   expires with the room's state
``clocks:{<tag>}``         zset    room id → when something falls due (ms): a flag, a first move, a
                                   computer's answer; for a finished room, when a sweeper settles
                                   its end unless its committing process has. One per shard slot
                                   (:mod:`server.store.slots`), the slot of the rooms it indexes
``clocks``                 zset    the same for rooms whose ids were made before ids fell on shard
                                   slots (2026-11-28); read by the sweepers as long as it exists
``web:lobby``              zset    room id → when listed (ms: its creation, or a player's return) of the games on the home page
``web:online``             hash    process id → players connected to that process (the lobby's count)
``web:online:seen``        zset    process id → when it last wrote its count (ms; older ones are dead)
``lb:{solo}:<p>:<m>:all``  zset    won classic games of preset ``p`` and mode ``m`` (JSON) → time ms
``lb:{solo}:<p>:<m>:d<day>`` zset  the same for one UTC day (expires after three days)
``pb:{solo}:<player>``     hash    ``<preset>:<mode>`` → the player's best result (JSON)
``pl:{players}:<player>``  hash    a player's record: ``name`` (as chosen), ``key`` (its claim)
``names:{players}``        hash    claimed name key (NFKC, casefolded) → player id
``rt:{ratings}:<player>``  hash    category → the player's rating there (JSON
                                   ``[rating, deviation, volatility, games]``)
``rh:{ratings}:<player>:<c>`` list  the player's rating after each rated game of category ``c``
                                   (JSON ``[ended ms, rating, game id]``, the newest 1000)
``rlb:{ratings}:<c>``      zset    player id → rating, the non-provisional players of ``c``
``rg:{ratings}:<game>``    string  the game's result is applied (expires 30 days after its end)
``pg:{<player>}:on``       hash    the player's games being played or waiting: room id → summary
                                   (JSON, ``server.core.summary``)
``pg:{<player>}:over``     zset    the player's finished games: room id → end (ms), the newest 100
``pg:{<player>}:sum``      hash    room id → summary (JSON) of the finished games in ``:over``
``mineduel:secret``        string  the shared token-signing key when ``SECRET_KEY`` is unset
``wsticket:<ticket>``      string  a room page's socket ticket is used (:mod:`server.web.socket_ticket`;
                                   expires after twice a ticket's life)
``pool:{pairing}:<pool>``  zset    quick pairing: the pool's waiting seeks → rating (rated
                                   pools) or join time in ms (casual pools)
``seeks:{pairing}``        hash    seek id → the waiting seek (JSON: player, name, pool,
                                   rating, joined ms, the room and seat it would open)
``seeks-live:{pairing}``   zset    seek id → alive until (ms), waiting or paired; its
                                   process pushes it on while the seeker waits
``seekers:{pairing}``      hash    player id → the player's one seek (waiting or paired)
``paired:{pairing}``       hash    seek id → its pair (JSON: room, pool, formed ms, players)
                                   until the seeker is told
``pairing:{pairing}:events`` chan  pairs whose room is open (the pair's JSON); ``{"ended"}``
=========================  ======  ==========================================================

The due index is one ZSET per shard slot so that a commit, which keeps the room's place in it,
touches one slot: new room ids are made to fall on one of the 16 shard slots
(:func:`server.store.slots.new_room_id`) and :func:`clock_key` names the ZSET of the room's slot.
Rooms made before keep the global ``clocks`` (their commits are the one cross-slot script call;
a cluster starts without such rooms). ``web:lobby`` is global too, but written outside any
script (one command: a cluster-aware client routes it).

Families beyond rooms carry one hash tag each, because one script must touch keys of any two
members: ``{solo}`` (classic results), ``{players}`` (a name claim frees one name and takes
another), ``{ratings}`` (a game updates two players' ratings, histories and a leaderboard and
marks the game applied), ``{pairing}`` (a seek checks the player's other seeks in any pool and
takes a partner out of its pool: :mod:`server.store.pairing`; tests pass a tag of their own).
Each family is one slot on a cluster; they are written once per finished game, rename or seek,
never per move. A player's games index carries the player's own tag (``{<player id>}``: one
player's three keys are one slot, written by one script), and is written when a game's status
or turn changes. ``tests/server/store/test_key_slots.py`` checks
that every script is called with keys of one slot.
"""

from __future__ import annotations

from typing import Any

import msgpack

from .slots import SHARD_TAGS, slot_of

CLOCKS = "clocks"
"""The due index of rooms made before ids fell on shard slots (see the module's doc)."""
_SHARD_CLOCKS = {slot: f"clocks:{{{tag}}}" for slot, tag in SHARD_TAGS.items()}
"""Shard slot → its due index (named once: a commit looks its key up, the sweepers read them all)."""
CLOCK_KEYS = (*_SHARD_CLOCKS.values(), CLOCKS)
"""Every due index a sweeper reads: one per shard slot, then the old global one."""
LOBBY = "web:lobby"
ONLINE = "web:online"
ONLINE_SEEN = "web:online:seen"
SECRET = "mineduel:secret"


def clock_key(room_id: str) -> str:
    """The due index that holds ``room_id``'s place: its shard slot's, in the slot of the room's
    own keys (the old global one for an id off the shard slots, made before they were)."""
    return _SHARD_CLOCKS.get(slot_of(room_id), CLOCKS)


def ticket_key(ticket: str) -> str:
    return f"wsticket:{ticket}"


def state_key(room_id: str) -> str:
    return f"game:{{{room_id}}}:state"


def log_key(room_id: str) -> str:
    return f"game:{{{room_id}}}:log"


def channel(room_id: str) -> str:
    return f"game:{{{room_id}}}:events"


def link_channel(process: str) -> str:
    """The channel only ``process``'s pub/sub link subscribes to, on the connection that holds
    its room subscriptions: while it has a subscriber, that connection is up (the commit script
    asks, ``scripts.rooms.COMMIT``). Nothing is published on it."""
    return f"link:{process}"


def watchers_key(room_id: str) -> str:
    return f"game:{{{room_id}}}:watchers"


def analysis_key(room_id: str) -> str:
    return f"game:{{{room_id}}}:analysis"


def solo_board_key(preset: str, mode: str, period: str) -> str:
    """A classic leaderboard (``period``: ``all`` or ``d<yyyymmdd>``). Every classic results key
    carries the hash tag ``{solo}``: one slot, so one script updates them all."""
    return f"lb:{{solo}}:{preset}:{mode}:{period}"


def solo_bests_key(player_id: str) -> str:
    return f"pb:{{solo}}:{player_id}"


def player_key(player_id: str) -> str:
    """A player's record. Every name key carries the hash tag ``{players}``: one slot, so one
    script frees the old name and claims the new one."""
    return f"pl:{{players}}:{player_id}"


NAMES = "names:{players}"
"""Claimed names: the name's key (:func:`server.store.players.name_key`) → player id."""


def ratings_key(player_id: str) -> str:
    """A player's ratings, one field per category. Every ratings key carries the hash tag
    ``{ratings}``: one slot, so one script updates both players of a game at once."""
    return f"rt:{{ratings}}:{player_id}"


def rating_history_key(player_id: str, category: str) -> str:
    return f"rh:{{ratings}}:{player_id}:{category}"


def rating_board_key(category: str) -> str:
    return f"rlb:{{ratings}}:{category}"


def rated_game_key(game_id: str) -> str:
    """Present while a game's result counts as applied (exactly once per game)."""
    return f"rg:{{ratings}}:{game_id}"


PAIRING = "pairing"
"""The quick-pairing family's hash tag (tests pass their own, to keep apart on one server)."""


def pool_key(pool_id: str, tag: str = PAIRING) -> str:
    """A pairing pool's waiting seeks. Every pairing key carries one hash tag: one slot, so
    one script sees a player's seek in any pool and takes a partner out of a pool."""
    return f"pool:{{{tag}}}:{pool_id}"


def seeks_key(tag: str = PAIRING) -> str:
    return f"seeks:{{{tag}}}"


def seeks_live_key(tag: str = PAIRING) -> str:
    return f"seeks-live:{{{tag}}}"


def seekers_key(tag: str = PAIRING) -> str:
    return f"seekers:{{{tag}}}"


def paired_key(tag: str = PAIRING) -> str:
    return f"paired:{{{tag}}}"


def pairing_channel(tag: str = PAIRING) -> str:
    return f"pairing:{{{tag}}}:events"


def games_on_key(player_id: str) -> str:
    """A player's games being played or waiting. A player's index keys carry the hash tag
    ``{<player id>}``: one slot, so one script moves a game from one list to the other."""
    return f"pg:{{{player_id}}}:on"


def games_over_key(player_id: str) -> str:
    return f"pg:{{{player_id}}}:over"


def games_summary_key(player_id: str) -> str:
    return f"pg:{{{player_id}}}:sum"


def room_of_channel(name: bytes | str) -> str:
    """Inverse of :func:`channel`."""
    text = name.decode() if isinstance(name, bytes) else name
    return text[text.index("{") + 1 : text.index("}")]


pack = msgpack.Packer(use_bin_type=True).pack
"""msgpack bytes of a value (one packer for the process: ``msgpack.packb`` makes a new one per call)."""


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False, strict_map_key=False)
