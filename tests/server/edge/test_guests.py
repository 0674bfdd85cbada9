"""Guests and their names (server.edge.guests) on the real Valkey: a name is one player's,
renames hand out a token with the new name, and guests from before names were registered get
theirs on first use (with a suffix when somebody took it meanwhile)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from server.core.room import Player
from server.edge.auth import Auth
from server.edge.guests import Guests
from server.store.players import NameTaken, Players
from tests.names import unique


@pytest.fixture
async def guests(redis_url: str) -> AsyncIterator[Guests]:
    client = aioredis.Redis.from_url(redis_url)
    try:
        yield Guests(Auth("k" * 32), Players(client))
    finally:
        await client.aclose()


async def test_a_name_is_one_players_whatever_its_case(guests: Guests) -> None:
    name = unique("Anna")
    anna, token = await guests.create(name)
    assert anna.name == name and guests.auth.resolve(token) == anna
    with pytest.raises(NameTaken):
        await guests.create(name.upper())
    assert await guests.current(anna) == anna


async def test_guests_without_a_name_get_distinct_ones(guests: Guests) -> None:
    made = [(await guests.create(None))[0] for _ in range(20)]
    assert len({p.name for p in made}) == 20 and all(p.name.startswith("Guest-") for p in made)


async def test_a_rename_keeps_the_old_name_and_the_new_token_carries_the_new(guests: Guests) -> None:
    old, new = unique("Anna"), unique("Hanna")
    anna, old_token = await guests.create(old)
    renamed, token = await guests.rename(anna, new)
    assert renamed == Player(anna.id, new) and guests.auth.resolve(token) == renamed
    stale = guests.auth.resolve(old_token)
    assert stale is not None and stale.id == anna.id  # the old token still names the same guest...
    assert await guests.current(stale) == renamed  # ...who is seated under the current name
    with pytest.raises(NameTaken):
        await guests.create(old)  # the old name stays hers: her games show it
    other, _ = await guests.create(None)
    with pytest.raises(NameTaken):
        await guests.rename(other, new.lower())
    assert (await guests.rename(renamed, new.upper()))[0].name == new.upper()  # one's own name, other case


async def test_a_guest_from_before_names_gets_its_tokens_name_or_a_suffixed_one(guests: Guests) -> None:
    name = unique("Cy")
    early, late = Player("g" + unique("early"), name), Player("g" + unique("late"), name)  # tokens of old
    assert await guests.current(early) == early  # registered under the token's name
    seated = await guests.current(late)  # the name is early's now
    assert seated.id == late.id and seated.name.startswith(name + "-") and seated.name != name
    assert await guests.current(late) == seated  # and stays that
