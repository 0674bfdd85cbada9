"""What a room page says of its status, its players and their clocks (plain values; pure but
for ``now_ms``, passed in)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine import Outcome
from engine.clock import DAY_MS, Clock
from engine.events import ABANDONED, ABORTED, RESIGNATION, TIMEOUT
from engine.moves import ClaimAbandoned

from ..core.computer import level_of
from ..core.room import Player, Room, Status
from .i18n import _, ngettext, number
from .view_model import (
    display_name,
    player_names,
    ruleset_label,
    score_pair_text,
    seat_name,
    seat_names,
)

# ---------------------------------------------------------------------- status and players


def outcome_text(outcome: Outcome, scores: Sequence[int], names: Sequence[str | None], viewer: int,
                 leaver: int | None = None) -> str:
    """The result line, read from the reader's side: who won and the score, the winner's first
    ("you win, 12 : −64"; "Anna wins, 1 : 2" to the player who resigned with 2: the reader's own
    first read as Anna's score, an outside probe found), a draw's from the reader's side
    (spectators: the seats in order). ``leaver``: the seat that left a game claimed as
    abandoned (:func:`leaver_of`; a win's claim names it too, a draw's does not)."""
    winner = outcome.winner
    first = winner if winner is not None else viewer if viewer in (0, 1) else 0
    score = score_pair_text(scores[first], scores[1 - first])

    if outcome.termination == RESIGNATION and winner is not None:
        loser = 1 - winner
        text = _("You resigned") if loser == viewer else _("%(name)s resigned") % {"name": seat_name(names, loser)}
    elif outcome.termination == TIMEOUT and winner is not None:
        loser = 1 - winner
        text = _("Your time ran out") if loser == viewer else \
            _("%(name)s\u2019s time ran out") % {"name": seat_name(names, loser)}
    elif outcome.termination == ABORTED:
        return _("Game aborted \u2014 no result")
    elif outcome.termination == ABANDONED:
        if leaver is None and winner is not None:
            leaver = 1 - winner  # the other claimed the win
        if leaver is None:
            text = _("Opponent left") if viewer in (0, 1) else _("A player left")
        else:
            text = _("You left") if leaver == viewer else _("Opponent left") if viewer in (0, 1) else \
                _("%(name)s left") % {"name": seat_name(names, leaver)}
    else:
        text = _("All mines found")
    if winner is None:
        return _("%(how)s \u2014 a draw, %(score)s") % {"how": text, "score": score}
    if winner == viewer:
        return _("%(how)s \u2014 you win, %(score)s") % {"how": text, "score": score}
    return _("%(how)s \u2014 %(name)s wins, %(score)s") % {"how": text, "name": seat_name(names, winner), "score": score}


def leaver_of(room: Room) -> int | None:
    """The seat that left a game its opponent claimed (the claim is the game's last move, made
    by the seat that stayed), else ``None``."""
    log = getattr(room.game, "log", None)
    if not log or not isinstance(log[-1][1], ClaimAbandoned):
        return None
    return 1 - log[-1][0]


@dataclass(frozen=True, slots=True)
class StatusLook:
    text: str
    css: str
    """``waiting``, ``your-turn``, ``their-turn``, ``watching``, ``over``, ``won``, ``lost``."""
    to_move: int | None


def status_look(room: Room, viewer: int) -> StatusLook:
    names = player_names(room)
    status = room.status
    view = room.view(viewer)
    if status is Status.WAITING:
        if viewer in (0, 1):
            return StatusLook(_("Waiting for an opponent \u2014 send them the link below"), "waiting", None)
        waiting = next((display_name(p.name) for p in room.players if p is not None), _("A player"))
        return StatusLook(_("%(name)s is waiting for an opponent") % {"name": waiting}, "waiting", None)
    if status is Status.OVER and view.outcome is not None:
        winner = view.outcome.winner
        css = "over"
        if viewer in (0, 1) and winner is not None:
            css = "won" if winner == viewer else "lost"
        return StatusLook(outcome_text(view.outcome, view.scores, names, viewer, leaver_of(room)), css, None)
    to_move = view.to_move
    if to_move is None:
        return StatusLook("", "over", None)
    if viewer == to_move:
        return StatusLook(_("Your turn"), "your-turn", to_move)
    who = {"name": seat_name(names, to_move)}
    if viewer in (0, 1):
        return StatusLook(_("%(name)s to move \u2014 you may pre-select a cell") % who, "their-turn", to_move)
    return StatusLook(_("%(name)s to move") % who, "watching", to_move)


TURN_MARK = "\u25cf"
"""Leads the tab's title while it is the reader's turn, so a background tab shows it."""


def tab_title(room: Room, viewer: int) -> str:
    """The page's ``<title>``, following the status: "● Your turn · Anna vs Ben · MineDuel",
    "Ben to move · …" (not "Computer (easy)’s turn"), the result at the end (the status line,
    read from the reader's side)."""
    names = player_names(room)
    shown = seat_names(names)
    game = _("%(a)s vs %(b)s") % {"a": shown[0] if names[0] else "\u2026", "b": shown[1] if names[1] else "\u2026"}
    look = status_look(room, viewer)
    if look.css == "your-turn":
        head = f"{TURN_MARK} {_('Your turn')}"
    elif look.css == "waiting":
        head = _("Waiting for an opponent")
    elif look.to_move is not None:
        head = _("%(name)s to move") % {"name": shown[look.to_move]}
    else:
        head = look.text
    return " \u00b7 ".join(part for part in (head, game, "MineDuel") if part)


def clock_text(ms: int) -> str:
    """``m:ss`` (rounded up, so 0:00 means the time is really gone); tenths under ten seconds,
    with the reader's decimal sign (``0:09.5``, German ``0:09,5``); ``h:mm:ss`` from an hour, and
    from a day (a correspondence game's clock) the rough span (``2 d 23 h``), not ``4320:00``."""
    if ms <= 0:
        return "0:00"
    if ms < 10_000:
        tenths = -(-ms // 100)
        return "0:" + number(tenths / 10, 1, whole=2)
    seconds = -(-ms // 1000)
    if seconds * 1000 >= DAY_MS:  # (rounded up first: a day less half a second reads "1 d", not "24:00:00")
        return duration_text(max(ms, DAY_MS))
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"


def duration_text(ms: int) -> str:
    """A rough span: ``2 d 3 h``, ``5 h 10 min``, ``12 min``, ``40 s``."""
    seconds = max(0, ms) // 1000
    days, hours, minutes = seconds // 86_400, seconds % 86_400 // 3600, seconds % 3600 // 60
    span = {"days": days, "hours": hours, "minutes": minutes, "seconds": seconds}
    if days:
        return (_("%(days)d d %(hours)d h") if hours else _("%(days)d d")) % span
    if hours:
        return (_("%(hours)d h %(minutes)d min") if minutes else _("%(hours)d h")) % span
    return (_("%(minutes)d min") if minutes else _("%(seconds)d s")) % span


def time_control_text(clock: Clock | None) -> str:
    """A game's time control as players write it: "3+2" (minutes + seconds a move; "1.5+0.5",
    German "1,5+0,5"; under a minute "30s+0"), "3 days" (correspondence), or "untimed". The one
    name of a clock: the lobby, the players' lists and the room page say this."""
    if clock is None:
        return _("untimed")
    if clock.per_move:
        days = clock.days
        return ngettext("%(num)d day", "%(num)d days", days) % {"num": days}
    if clock.initial_ms >= 60_000:
        initial = number(clock.initial_ms / 60_000, 2, trim=True)
    else:
        initial = number(clock.initial_ms / 1000, 1, trim=True) + "s"
    return f"{initial}+{number(clock.increment_ms / 1000, 1, trim=True)}"


def terms_text(room: Room) -> str:
    """The room page's line of terms: the rules, the clock (:func:`time_control_text`) and
    whether the game is rated, "Coan rules · 3+2 · rated"."""
    parts = [ruleset_label(room.ruleset)]
    if room.clock is not None:
        parts.append(time_control_text(room.clock))
    if room.rated:
        parts.append(_("rated"))
    return " \u00b7 ".join(parts)


@dataclass(frozen=True, slots=True)
class ClockLook:
    seat: int
    text: str
    running: bool
    low: bool
    deadline_ms: int | None = None
    """A correspondence clock's running seat: when its time is up, shown beside the card's clock
    as a moment (``Dec 2, 2026, 14:05 UTC``, formatted there: a heartbeat's clocks do not show
    it): days away, "2 d 23 h" alone leaves the reader to count (an outside probe)."""


def clock_looks(room: Room, now_ms: int) -> list[ClockLook] | None:
    data = room.clock_data(now_ms)
    if data is None:
        return None
    running = data["running"] if room.status is Status.PLAYING else None
    due = room.clock.deadline_ms() if room.clock is not None and room.clock.per_move and running is not None else None
    return [
        ClockLook(seat, clock_text(ms), running == seat, ms < 30_000, due if running == seat else None)
        for seat, ms in enumerate(data["remaining_ms"])
    ]


@dataclass(frozen=True, slots=True)
class PlayerLook:
    seat: int
    name: str
    present: bool
    you: bool
    score: int
    to_move: bool
    winner: bool
    clock: ClockLook | None
    rating: str | None = None
    """The player's rating in a rated game's category ("1523", "1500?"), if known."""
    href: str | None = None
    """The player's page (people only: a computer has none)."""


def player_looks(room: Room, viewer: int, now_ms: int, ratings: Sequence[str | None] = ()) -> list[PlayerLook]:
    """The player cards. ``ratings``: per seat, the rating to show beside the name (plain
    strings the caller read: ``server.web.rating_labels``; none for a casual game)."""
    view = room.view(viewer)
    clocks = clock_looks(room, now_ms)
    winner = view.outcome.winner if view.outcome is not None else None
    playing = room.status is Status.PLAYING
    return [
        PlayerLook(
            seat=seat,
            name=seat_name(player_names(room), seat) if room.players[seat] else _("Waiting\u2026"),
            present=room.players[seat] is not None,
            you=seat == viewer,
            score=view.scores[seat],
            to_move=playing and view.to_move == seat,
            winner=winner == seat,
            clock=clocks[seat] if clocks else None,
            rating=ratings[seat] if seat < len(ratings) else None,
            href=player_href(room.players[seat]),
        )
        for seat in (0, 1)
    ]


def player_href(player: Player | None) -> str | None:
    """A person's page, ``/p/<id>`` (``None`` for a computer or an open seat)."""
    if player is None or level_of(player) is not None:
        return None
    return f"/p/{player.id}"


