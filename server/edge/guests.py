"""Guests as the site knows them: an id, a token, and a display name nobody else holds.

The token (:class:`~server.edge.auth.Auth`) signs the id and the name the guest had when it
was issued, so resolving it costs no Redis round trip; the name in it is only a hint. The
name that counts is the one registered in :class:`~server.store.players.Players` (unique
whatever its case or width): :meth:`Guests.current` reads it where a player is put into a
room or onto a page that others see, so two players can never both show as "Anna", and a
renamed player's new games carry the new name. A rename issues a new token (and cookie) with
the new name; old tokens keep working for the same id.

Guests from before names were registered are registered on first use under their token's
name, or, when another player took it meanwhile, under that name with a short suffix.
"""

from __future__ import annotations

import secrets

from ..core.room import Player
from ..store.players import NameTaken, Players
from ..web.i18n import N_, in_every_language
from ..web.view_model import COMPUTER_NAMES
from .auth import MAX_NAME, Auth, auto_name

AUTO_NAME_ATTEMPTS = 8


def reserved_names() -> frozenset[str]:
    """What pages show in place of a person: the computers' names and the empty seats' ("Player
    1"), in every language of the site. Nobody may register them (:class:`Players` is built
    with them): "Computer (mittel)" passed for the computer on German pages, and "Spieler 2"
    for an empty seat."""
    return frozenset(word for message in (*COMPUTER_NAMES.values(), N_("Player 1"), N_("Player 2"))
                     for word in in_every_language(message))


class Guests:
    def __init__(self, auth: Auth, players: Players) -> None:
        self.auth = auth
        self.players = players

    async def create(self, name: str | None) -> tuple[Player, str]:
        """A new guest named ``name`` (already validated), or ``Guest-xxxxxx`` when ``None``;
        and its token. Raises :class:`NameTaken` when another player holds ``name``."""
        if name is not None:
            return await self._issue(name)
        for _ in range(AUTO_NAME_ATTEMPTS - 1):
            try:
                return await self._issue(auto_name())
            except NameTaken:
                continue  # 16 million names: a collision is rare, two in a row rarer still
        return await self._issue(auto_name())

    async def claims_new(self, player: Player, name: str) -> bool:
        """Whether renaming ``player`` to ``name`` would claim a name they do not hold yet (what
        a rename's budget is spent on: taking one's own name back, or another case of it, claims
        nothing). Raises :class:`NameTaken` when another player holds it (nothing spent)."""
        holder = await self.players.holder_of(name)
        if holder is not None and holder != player.id:
            raise NameTaken(f"the name {name!r} is taken")
        return holder is None

    async def rename(self, player: Player, name: str) -> tuple[Player, str]:
        """``player`` is called ``name`` (validated) from now on; the new token says so.
        Raises :class:`NameTaken` when another player holds ``name`` (any case)."""
        await self.players.register(player.id, name)
        renamed = Player(player.id, name)
        return renamed, self.auth.token_for(renamed)

    async def current(self, player: Player) -> Player:
        """``player`` under its registered name (registering the token's name if it has none)."""
        name = await self.players.name_of(player.id)
        if name is not None:
            return Player(player.id, name) if name != player.name else player
        return Player(player.id, await self._register_legacy(player))

    async def _issue(self, name: str) -> tuple[Player, str]:
        player, token = self.auth.issue(name)
        await self.players.register(player.id, player.name)
        return player, token

    async def _register_legacy(self, player: Player) -> str:
        candidates = [player.name] + [suffixed(player.name) for _ in range(AUTO_NAME_ATTEMPTS)]
        for name in candidates:
            try:
                return await self.players.register(player.id, name)
            except NameTaken:
                continue
        return await self.players.register(player.id, auto_name())


def suffixed(name: str) -> str:
    """``name`` with a short random suffix, within the length limit."""
    suffix = "-" + secrets.token_hex(2)
    return name[: MAX_NAME - len(suffix)] + suffix
