"""Guests and their bearer tokens, shared by the API edge and the browser edge.

A guest is an id and a display name. Its token is that pair signed with the server's key
(``SECRET_KEY``, or a random key kept in Redis so that every process agrees), so resolving a
token needs no Redis round-trip. Tokens do not expire; a new key invalidates them all.

Both edges resolve tokens with :meth:`Auth.resolve` (``app.state.auth``); the browser edge
stores the same token in a signed cookie.
"""

from __future__ import annotations

import secrets
import unicodedata
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer

from ..core.room import Player
from ..web.i18n import N_, _

MAX_NAME = 32


class Auth:
    def __init__(self, key: str) -> None:
        self._serializer = URLSafeSerializer(key, salt="mineduel-guest")

    def issue(self, name: str | None) -> tuple[Player, str]:
        """A new guest with a cleaned-up ``name`` (a default one if empty) and its token."""
        player = Player("g" + secrets.token_urlsafe(9), clean_name(name))
        return player, self.token_for(player)

    def token_for(self, player: Player) -> str:
        """The token of ``player`` (its id, and its name as a hint: see ``server.edge.guests``)."""
        return self._serializer.dumps([player.id, player.name])

    def resolve(self, token: str | None) -> Player | None:
        """The guest a token stands for, or ``None`` for a missing or forged token."""
        if not token or len(token) > 512:
            return None
        try:
            pid, name = self._serializer.loads(token)
        except (BadSignature, ValueError, TypeError):
            return None
        if not isinstance(pid, str) or not isinstance(name, str):
            return None
        return Player(pid, name)


def bearer_token(headers: Any, query: Any) -> str | None:
    """The token of a request or websocket: ``Authorization: Bearer <t>`` or ``?token=<t>``."""
    value = headers.get("authorization")
    if value and value[:7].lower() == "bearer ":
        return value[7:].strip() or None
    return query.get("token") or None


class BadName(ValueError):
    """A guest name refused at creation. ``reason`` says why in English, a msgid marked for the
    catalogs with its ``params``; ``str()`` is it filled in (the JSON API's message), and
    :meth:`said` the same in the language of the render in progress (pages)."""

    def __init__(self, reason: str, **params: object) -> None:
        super().__init__(reason % params if params else reason)
        self.reason = reason
        self.params = params

    def said(self) -> str:
        return _(self.reason) % self.params if self.params else _(self.reason)


MAX_COMBINING = 2
"""At most this many combining marks in a row ("Zalgo" text would spill over the page)."""


def validate_name(name: object) -> str | None:
    """A name as typed → the name to use, or ``None`` for "pick one for me"; raises :class:`BadName`.

    NFC-normalised, surrounding whitespace stripped and inner runs collapsed to one space; at
    most :data:`MAX_NAME` characters; no control, format (bidi overrides, zero-width),
    private-use, unassigned or line/paragraph-separator characters; no piles of combining marks.
    Everything else (any script, emoji, ``<``, quotes) is allowed: pages escape it.
    """
    if name is None:
        return None
    if not isinstance(name, str):
        raise BadName(N_("a name must be text"))
    if len(name) > 4 * MAX_NAME:
        raise BadName(N_("names are at most %(most)d characters"), most=MAX_NAME)
    text = unicodedata.normalize("NFC", name)
    run = 0
    for ch in text:
        category = unicodedata.category(ch)
        if category[0] == "C" or category in ("Zl", "Zp"):
            raise BadName(N_("names cannot contain control or invisible characters (a name is one line of text)"))
        run = run + 1 if category[0] == "M" else 0
        if run > MAX_COMBINING:
            raise BadName(N_("too many combining marks in a row"))
    text = " ".join(text.split())
    if len(text) > MAX_NAME:
        raise BadName(N_("names are at most %(most)d characters"), most=MAX_NAME)
    if len(scripts_of(text) & LOOKALIKE_SCRIPTS) > 1:
        raise BadName(N_("a name cannot mix Latin, Greek and Cyrillic letters"))
    return text or None


def required_name(name: object) -> str:
    """:func:`validate_name` where a name must be given (a form that asks for one): blank is
    refused, not "pick one for me" (an outside probe typed spaces and became "Guest-…")."""
    text = validate_name(name)
    if text is None:
        raise BadName(N_("a name needs at least one letter or sign"))
    return text


LOOKALIKE_SCRIPTS = frozenset({"LATIN", "GREEK", "CYRILLIC"})
"""Scripts whose letters pass for each other ("Аnna" with a Cyrillic А beside "Anna"): a name
may use any one of them, not two (as browsers show a mixed-script domain name as punycode). Why
not Unicode's confusables data (UTS #39): a dependency for what one rule here catches (an outside
probe registered "Аnna" beside "Anna"); a whole name in another script is a name of its own."""


def scripts_of(text: str) -> set[str]:
    """The scripts of ``text``'s letters, by the first word of their Unicode names ("LATIN")."""
    return {unicodedata.name(ch, "?").split(" ", 1)[0] for ch in text if ch.isalpha()}


def clean_name(name: str | None) -> str:
    """Printable, single-line, at most 32 characters; ``Guest-xxxxxx`` when nothing is left."""
    if isinstance(name, str):
        text = "".join(ch for ch in unicodedata.normalize("NFC", name) if unicodedata.category(ch)[0] != "C")
        text = " ".join(text.split())[:MAX_NAME]
        if text:
            return text
    return auto_name()


def auto_name() -> str:
    """A default name for a guest who gave none (16 million of them: see ``server.edge.guests``)."""
    return "Guest-" + secrets.token_hex(3)
