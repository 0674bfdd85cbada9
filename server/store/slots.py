"""Redis Cluster slots of room keys, and room ids made to fall on a few of them.

On a cluster a script may only touch keys of one slot. A commit writes the room's keys (hash
tag ``{<room id>}``) and the room's place in the due index the sweepers read, so the index is
one ZSET per **shard slot** (the 16 slots that are multiples of 1024), in the same slot as the
rooms it indexes, and new room ids are made to fall on a shard slot: a commit touches one slot,
and a sweeper reads 16 ZSETs instead of one per slot in use (:func:`server.store.keys.clock_key`).

Why not drawing ids until one lands there (1,024 draws on average): the slot is CRC16 (XMODEM)
of the hash tag, mod 16,384, and that CRC has no final XOR, so it is linear over GF(2): for a
two-byte ``s``, ``crc(p + s) = crc(s) ^ crc(b"\\0\\0", start=crc(p))``. A room id is 12 random
url-safe characters and a two-character suffix looked up by the low 10 bits the prefix leaves,
so that the whole id's are zero. The 4,096 two-character suffixes cover 1,022 of the 1,024
values; a prefix that needs one of the other two is drawn again.
"""

from __future__ import annotations

import secrets
import string
from binascii import crc_hqx
from itertools import count

SLOTS = 16_384
"""A Redis Cluster's hash slots: a key's slot is the CRC16 of its hash tag, mod this."""
SHARD_BITS = 10
"""A shard slot's low bits, all zero: 16 shard slots, 1,024 apart (spread over any cluster's nodes)."""
_SHARD_MASK = (1 << SHARD_BITS) - 1
_URLSAFE = string.ascii_letters + string.digits + "-_"


def slot_of(tag: str) -> int:
    """The cluster slot of the keys whose hash tag is ``tag`` (``redis.crc.key_slot``'s figure)."""
    return crc_hqx(tag.encode(), 0) % SLOTS


def is_shard_slot(slot: int) -> bool:
    return slot & _SHARD_MASK == 0


def _suffixes() -> dict[int, str]:
    """Two url-safe characters for each low-bits value of their CRC that some pair has."""
    table: dict[int, str] = {}
    for a in _URLSAFE:
        for b in _URLSAFE:
            table.setdefault(crc_hqx((a + b).encode(), 0) & _SHARD_MASK, a + b)
    return table


_SUFFIX = _suffixes()


def on_a_shard_slot(prefix: str) -> str | None:
    """``prefix`` and the two characters that put it on a shard slot (``None``: no pair does)."""
    low = crc_hqx(b"\0\0", crc_hqx(prefix.encode(), 0)) & _SHARD_MASK
    suffix = _SUFFIX.get(low)
    return None if suffix is None else prefix + suffix


def new_room_id() -> str:
    """A fresh room id (14 url-safe characters, 72 random bits) on a shard slot."""
    while (room_id := on_a_shard_slot(secrets.token_urlsafe(9))) is None:
        pass
    return room_id


def _shard_tags() -> dict[int, str]:
    """A short hash tag in each shard slot (the due index's keys: ``clocks:{<tag>}``)."""
    tags: dict[int, str] = {}
    for n in count():
        tag = on_a_shard_slot(format(n, "x"))
        if tag is not None:
            tags.setdefault(slot_of(tag), tag)
            if len(tags) == SLOTS >> SHARD_BITS:
                return dict(sorted(tags.items()))
    raise AssertionError("unreachable")


SHARD_TAGS = _shard_tags()
"""Shard slot → a hash tag in it, the same in every process (made the same way each time)."""
