"""Room ids on the due index's shard slots, and the due index a room's commits keep."""

from __future__ import annotations

import string
from binascii import crc_hqx

from hypothesis import given
from hypothesis import strategies as st
from redis.crc import key_slot

from server.store.keys import CLOCK_KEYS, CLOCKS, clock_key, state_key
from server.store.slots import SHARD_TAGS, SLOTS, is_shard_slot, new_room_id, on_a_shard_slot, slot_of
from server.web.site import ROOM_ID

URLSAFE = string.ascii_letters + string.digits + "-_"
prefixes = st.text(alphabet=URLSAFE, min_size=1, max_size=20)


@given(prefixes, st.text(alphabet=URLSAFE, min_size=2, max_size=2))
def test_crc16_of_a_two_character_suffix_is_linear(prefix: str, suffix: str) -> None:
    """What the suffix table stands on: no final XOR, so the prefix's part and the suffix's add."""
    whole = crc_hqx((prefix + suffix).encode(), 0)
    assert whole == crc_hqx(suffix.encode(), 0) ^ crc_hqx(b"\0\0", crc_hqx(prefix.encode(), 0))


@given(prefixes)
def test_a_prefix_with_its_suffix_is_on_a_shard_slot(prefix: str) -> None:
    room_id = on_a_shard_slot(prefix)
    if room_id is not None:  # 2 of the 1,024 low-bits values have no suffix
        assert room_id[:-2] == prefix and all(ch in URLSAFE for ch in room_id[-2:])
        assert is_shard_slot(key_slot(state_key(room_id).encode()))


def test_new_room_ids_are_fresh_url_safe_and_spread_over_every_shard_slot() -> None:
    ids = [new_room_id() for _ in range(2_000)]
    assert len(set(ids)) == len(ids)
    assert all(len(room_id) == 14 and ROOM_ID.match(room_id) for room_id in ids)
    found = {key_slot(state_key(room_id).encode()) for room_id in ids}
    assert found == set(SHARD_TAGS) == set(range(0, SLOTS, 1024))


def test_each_shard_tag_is_in_its_slot() -> None:
    assert len(SHARD_TAGS) == 16
    for slot, tag in SHARD_TAGS.items():
        assert slot_of(tag) == key_slot(f"clocks:{{{tag}}}".encode()) == slot


def test_a_rooms_due_index_is_in_the_slot_of_its_keys() -> None:
    for room_id in (new_room_id() for _ in range(500)):
        key = clock_key(room_id)
        assert key != CLOCKS and key in CLOCK_KEYS
        assert key_slot(key.encode()) == key_slot(state_key(room_id).encode())


def test_an_id_made_before_shard_slots_keeps_the_global_due_index() -> None:
    old = next(f"old{n}" for n in range(100) if not is_shard_slot(slot_of(f"old{n}")))
    assert clock_key(old) == CLOCKS
    assert CLOCK_KEYS[-1] == CLOCKS and len(set(CLOCK_KEYS)) == len(CLOCK_KEYS) == 17
