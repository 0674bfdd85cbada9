"""What each element of a room page says, as plain values: the HTML view model.

Pure: no I/O, no templates; the only outside fact read is the time, passed in as ``now_ms``.
Python decides *what* each element says (classes, labels, texts: :class:`CellLook`,
:func:`move_text`, :func:`status_look`...); the Jinja2 macros in ``web/templates/_room.html``
decide the markup (:mod:`server.web.html_codec`). Everything comes from ``room.view(viewer)``:
the only per-viewer facts are the viewer's own wrong marks, which the engine puts in that
seat's view alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine import MoveLine, Outcome, View, cell_name, verify
from engine.clock import Clock
from engine.encoding import CHAR_CLAIMS, HIDDEN, OWN_WRONG_MARK, UNCLAIMED_MINE
from engine.events import ABANDONED, ABORTED, RESIGNATION, TIMEOUT
from engine.rules import Claim, Verdict

from ..core.computer import level_of, people_away
from ..core.decide import LEAVE_GRACE_MS, accepts_rematch
from ..core.room import Player, Room, Status
from ..store.messages import Attendance

MINUS = "\u2212"


# ---------------------------------------------------------------------- small words


def score_text(points: int) -> str:
    """A score: ``12``, ``0``, ``−4`` (a real minus sign)."""
    return f"{MINUS}{-points}" if points < 0 else str(points)


def points_text(points: int) -> str:
    """``+4``, ``−3`` (a real minus sign), ``±0``."""
    if points > 0:
        return f"+{points}"
    if points < 0:
        return f"{MINUS}{-points}"
    return "\u00b10"


def seat_name(names: Sequence[str | None], seat: int) -> str:
    name = names[seat]
    return name if name else ("Player 1" if seat == 0 else "Player 2")


def initial(name: str | None) -> str:
    """The first letter of a name, for the small badge on claimed mines."""
    for ch in name or "":
        if ch.isalnum():
            return ch.upper()
    return "?"


@dataclass(frozen=True, slots=True)
class MoveText:
    """One move-list line as words: ``7. Anna mark d9 Gut! +4``."""

    number: int
    seat: int
    who: str
    action: str
    where: str
    """The cell name, or ``?`` for somebody else's wrong mark."""
    verdict: str
    points: str
    auto: int
    css: str

    @property
    def text(self) -> str:
        base = f"{self.number}. {self.who} {self.action} {self.where} {self.verdict} {self.points}"
        return base + (f" \u00b7 {self.auto} revealed" if self.auto else "")


_VERDICT_CSS = {Verdict.GUT: "gut", Verdict.AUTSCH: "autsch", Verdict.BLUBB: "blubb"}


def move_text(line: MoveLine, names: Sequence[str | None]) -> MoveText:
    return MoveText(
        number=line.number,
        seat=line.seat,
        who=seat_name(names, line.seat),
        action=line.action.value,
        where=cell_name(line.cell) if line.cell is not None else "?",
        verdict=line.verdict.value,
        points=points_text(line.points),
        auto=line.auto_revealed,
        css=f"p{line.seat} {_VERDICT_CSS[line.verdict]}",
    )


# ---------------------------------------------------------------------- cells


@dataclass(frozen=True, slots=True)
class CellLook:
    """Everything the ``cell`` macro needs for one board cell."""

    r: int
    c: int
    css: str
    label: str
    text: str = ""
    """The digit shown (empty for 0 and for non-number cells)."""
    badge: str = ""
    """A claimer's initial on marked/hit mines and wrong marks shown at the end."""
    playable: bool = False
    """A hidden cell the viewer may click (a button that sends ``cell=r-c``)."""
    autofocus: bool = False
    selected: bool = False
    """Selected by this connection: first in the tab order, so Tab goes on to Confirm."""
    odds: str = ""
    """A replay's odds overlay: the cell's mine chance (``41 %``), shown on hover or focus
    (server/web/odds_view.py); the cell is then focusable."""

    @property
    def id(self) -> str:
        return f"cell-{self.r}-{self.c}"

    @property
    def value(self) -> str:
        return f"{self.r}-{self.c}"


SELECT_EXPLORE, SELECT_MARK = "explore", "mark"


def cell_look(
    view: View,
    r: int,
    c: int,
    names: Sequence[str | None],
    *,
    playable: bool,
    selected: str | None = None,
    autofocus: bool = False,
    end: str | None = None,
) -> CellLook:
    """The look of cell ``(r, c)`` in ``view``.

    ``playable``: the viewer holds a seat in a running game (hidden cells become buttons).
    ``selected``: this connection's selection on the cell (``"explore"``/``"mark"``).
    ``end``: what a finished game publishes, for its final board (``"final"``: every wrong
    mark, the numbers of never-opened cells) or a replay position (``"replay"``: the hidden
    mines faintly, the wrong marks made so far). ``None`` while the game is on.
    """
    ch = view.rows[r][c]
    name = cell_name((r, c))
    classes = ["cell"]
    text, badge = "", ""
    hidden = ch in (HIDDEN, OWN_WRONG_MARK)
    ghosts = end is not None
    mines = set(view.mines) if ghosts and view.mines is not None else None

    if ch.isdigit():
        n = int(ch)
        classes += ["open", f"n{n}"]
        text = ch if n else ""
        label = f"{name}, {n}"
    elif ch in CHAR_CLAIMS:
        seat, claim = CHAR_CLAIMS[ch]
        who = seat_name(names, seat)
        badge = initial(who)
        if claim is Claim.MARKED:
            classes += ["mine", "marked", f"p{seat}"]
            label = f"{name}, mine marked by {who}"
        else:
            classes += ["mine", "hit", f"p{seat}"]
            label = f"{name}, mine hit by {who}"
    elif ch == UNCLAIMED_MINE:
        classes += ["mine", "unclaimed"]
        label = f"{name}, mine"
    elif mines is not None and (r, c) in mines:
        classes += ["hidden", "ghost-mine"]
        label = f"{name}, hidden mine"
    elif mines is not None and end == "final":
        # a safe cell nobody opened, shown with its number once the game is over
        n = view.neighbour_mines((r, c))
        classes += ["ghost", f"n{n}"]
        text = str(n) if n else ""
        label = f"{name}, {n}, never opened"
    else:
        classes.append("hidden")
        label = f"{name}, hidden"
        if ch == OWN_WRONG_MARK:
            classes.append("wrong-own")
            label += ", your wrong mark"

    if ghosts and ch not in CHAR_CLAIMS:
        # the end publishes every wrong mark, also on cells opened later
        for seat in (0, 1):
            if (r, c) in view.wrong_marks[seat]:
                who = seat_name(names, seat)
                classes += ["wrong", f"p{seat}"]
                badge = initial(who)
                label += f", wrong mark by {who}"

    if (r, c) in view.last_opened:
        last_cell = view.moves[-1].cell if view.moves else None
        if (r, c) == last_cell:
            classes.append("last")
            label += ", last move"
        elif end != "final":  # at the very end deduction often opens everything: no flood of colour
            classes.append("auto")
            label += ", revealed by deduction"

    playable = playable and hidden and not ghosts
    is_selected = playable and selected in (SELECT_EXPLORE, SELECT_MARK)
    if is_selected:
        classes.append(f"sel-{selected}")
        label += f", selected to {selected}"
    return CellLook(r, c, " ".join(classes), label, text, badge, playable, autofocus and playable, is_selected)


def board_looks(view: View, names: Sequence[str | None], *, playable: bool, end: str | None = None) -> list[CellLook]:
    return [
        cell_look(view, r, c, names, playable=playable, end=end)
        for r in range(view.height)
        for c in range(view.width)
    ]


# ---------------------------------------------------------------------- status and players


def outcome_text(outcome: Outcome, scores: Sequence[int], names: Sequence[str | None], viewer: int) -> str:
    """The result line, read from the reader's side: a player's own score comes first ("you
    win, 12 : −64"); spectators read the seats in order."""
    a, b = (scores[viewer], scores[1 - viewer]) if viewer in (0, 1) else scores
    score = f"{score_text(a)}\u00a0:\u00a0{score_text(b)}"
    winner = outcome.winner

    def who(seat: int) -> str:
        return "You" if seat == viewer else seat_name(names, seat)

    if outcome.termination == RESIGNATION and winner is not None:
        loser = 1 - winner
        text = f"{who(loser)} resigned"
    elif outcome.termination == TIMEOUT and winner is not None:
        loser = 1 - winner
        text = "Your time ran out" if loser == viewer else f"{seat_name(names, loser)}\u2019s time ran out"
    elif outcome.termination == ABORTED:
        return "Game aborted \u2014 no result"
    elif outcome.termination == ABANDONED:
        text = "Opponent left" if viewer in (0, 1) else "A player left"
    else:
        text = "All mines found"
    if winner is None:
        return f"{text} \u2014 a draw, {score}"
    if winner == viewer:
        return f"{text} \u2014 you win, {score}"
    return f"{text} \u2014 {seat_name(names, winner)} wins, {score}"


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
            return StatusLook("Waiting for an opponent \u2014 send them the link below", "waiting", None)
        waiting = next((p.name for p in room.players if p is not None), "A player")
        return StatusLook(f"{waiting} is waiting for an opponent", "waiting", None)
    if status is Status.OVER and view.outcome is not None:
        winner = view.outcome.winner
        css = "over"
        if viewer in (0, 1) and winner is not None:
            css = "won" if winner == viewer else "lost"
        return StatusLook(outcome_text(view.outcome, view.scores, names, viewer), css, None)
    to_move = view.to_move
    if to_move is None:
        return StatusLook("", "over", None)
    if viewer == to_move:
        return StatusLook("Your turn", "your-turn", to_move)
    if viewer in (0, 1):
        return StatusLook(f"{seat_name(names, to_move)}\u2019s turn \u2014 you may pre-select a cell", "their-turn", to_move)
    return StatusLook(f"{seat_name(names, to_move)}\u2019s turn", "watching", to_move)


def player_names(room: Room) -> tuple[str | None, str | None]:
    return (
        room.players[0].name if room.players[0] else None,
        room.players[1].name if room.players[1] else None,
    )


def clock_text(ms: int) -> str:
    """``m:ss`` (rounded up, so 0:00 means the time is really gone); tenths under ten seconds."""
    if ms <= 0:
        return "0:00"
    if ms < 10_000:
        tenths = -(-ms // 100)
        return f"0:{tenths // 10:02d}.{tenths % 10}"
    seconds = -(-ms // 1000)
    return f"{seconds // 60}:{seconds % 60:02d}"


def time_control_text(clock: Clock | None) -> str:
    """A game's time control as players write it: "3+2" (minutes + seconds a move), "3 days"
    (correspondence), or "untimed"."""
    if clock is None:
        return "untimed"
    if clock.per_move:
        days = clock.days
        return f"{days} day" if days == 1 else f"{days} days"
    minutes = clock.initial_ms / 60_000
    whole = f"{minutes:g}" if minutes >= 1 else f"{clock.initial_ms // 1000}s"
    return f"{whole}+{clock.increment_ms // 1000}"


@dataclass(frozen=True, slots=True)
class ClockLook:
    seat: int
    text: str
    running: bool
    low: bool


def clock_looks(room: Room, now_ms: int) -> list[ClockLook] | None:
    data = room.clock_data(now_ms)
    if data is None:
        return None
    running = data["running"] if room.status is Status.PLAYING else None
    return [
        ClockLook(seat, clock_text(ms), running == seat, ms < 30_000)
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
            name=seat_name(player_names(room), seat) if room.players[seat] else "Waiting\u2026",
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


# ---------------------------------------------------------------------- the fairness check and the replay


@dataclass(frozen=True, slots=True)
class FairLook:
    commitment: str
    salt: str | None
    verified: bool | None
    """``None`` while the game is on (nothing to check yet)."""
    mines: str = ""


def fair_look(view: View) -> FairLook:
    if view.salt is None or view.mines is None:
        return FairLook(view.commitment, None, None)
    ok = verify(view.commitment, view.width, view.height, view.mines, view.salt)
    return FairLook(view.commitment, view.salt, ok, " ".join(cell_name(m) for m in view.mines))


@dataclass(frozen=True, slots=True)
class ReplayLook:
    room_id: str
    at: int
    """Moves applied (0 = the start); ``total`` = the final position."""
    total: int
    scores: tuple[int, int]
    line: str
    """The move-list text of move ``at`` (empty at the start)."""
    odds: bool = False
    """The odds overlay is on: the steps keep it on."""

    @property
    def first(self) -> bool:
        return self.at == 0

    @property
    def last(self) -> bool:
        return self.at >= self.total

    def href(self, at: int) -> str:
        return f"/g/{self.room_id}/replay?at={max(0, min(at, self.total))}" + ("&odds=1" if self.odds else "")


@dataclass(frozen=True, slots=True)
class OfferLook:
    state: str | None
    """``theirs`` (the viewer may accept or decline), ``mine`` (waiting for the answer),
    ``declined`` (the last offer was declined or withdrawn) or ``None``."""
    by: str = ""
    """Who offered (its name)."""
    to: str = ""
    """Who is asked (its name)."""
    text: str = ""
    instant: bool = False
    """A rematch needs nobody's answer (the opponent is a computer): "Play again"."""


def rematch_offer_look(room: Room, viewer: int) -> OfferLook:
    """What the end screen says about a rematch offer, for ``viewer``."""
    names = [p.name if p else "" for p in room.players]
    offer, declined = room.rematch_offer, room.rematch_declined
    instant = viewer in (0, 1) and accepts_rematch(room, viewer) and offer is None
    if offer is not None:
        state = "mine" if offer == viewer else "theirs"
        return OfferLook(state, names[offer], names[1 - offer] if len(names) > 1 else "")
    if declined is not None:
        text = "You declined the rematch." if declined == viewer else f"{names[declined]} declined the rematch."
        return OfferLook("declined", text=text, instant=instant)
    return OfferLook(None, instant=instant)


# ---------------------------------------------------------------------- who is here, aborting, claiming


def away_text(room: Room, attendance: Attendance) -> str:
    """Who of the players has left a game being played (the same for every viewer)."""
    if room.status is not Status.PLAYING:
        return ""
    gone = [p.name for p, since in zip(room.players, people_away(room, attendance.away_since), strict=False)
            if p is not None and since is not None]
    if not gone:
        return ""
    return " and ".join(gone) + (" have" if len(gone) > 1 else " has") + " left the game."


def abortable(room: Room, viewer: int) -> bool:
    """Whether ``viewer`` may call the game off: a seat, before both seats have moved."""
    return viewer in (0, 1) and room.status is not Status.OVER and not room.game.every_seat_moved


@dataclass(frozen=True, slots=True)
class ClaimLook:
    opponent: str
    wait_s: int
    """Seconds until the claim is possible (0: now)."""


def claim_look(room: Room, viewer: int, attendance: Attendance, now_ms: int) -> ClaimLook | None:
    """What a seated viewer may do about an opponent who left a live game (``None``: nothing)."""
    if viewer not in (0, 1) or room.status is not Status.PLAYING or len(room.players) != 2:
        return None
    if room.clock is not None and room.clock.per_move:
        return None  # correspondence: the clock decides
    opponent = room.players[1 - viewer]
    since = people_away(room, attendance.away_since)[1 - viewer]
    if opponent is None or since is None:
        return None
    wait_ms = LEAVE_GRACE_MS - (now_ms - since)
    return ClaimLook(opponent.name, max(0, -(-wait_ms // 1000)))
