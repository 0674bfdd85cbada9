"""The browser's "html" codec: rooms and views rendered into HTML fragments, nothing else.

Pure rendering: no I/O; the only outside fact read is the wall clock, for the time left on a
game clock (``now_ms`` arguments; the Codec methods, which have none, read it themselves).
Python decides *what* each element says (classes, labels, texts: :class:`CellLook`,
:func:`move_text`, :func:`status_look`); the Jinja2 macros in ``web/templates/_room.html``
decide the markup. Pages and websocket frames use the same macros, so a live page and a
reloaded one are byte-for-byte the same HTML.

Every dynamic part of a room page is an element with a stable ``id`` (see :data:`AREAS`). A
websocket frame is a run of such top-level elements; the htmx ws extension swaps each one
out-of-band by ``id``. A snapshot frame carries every area; an update frame only the changed
cells, the player cards, the status, the mines counter, the new move-list lines (prepended
with ``hx-swap-oob="afterbegin:#moves"``) and the version input.

Secrets: everything comes from ``room.view(viewer)``; the only per-viewer facts are the
viewer's own wrong marks, which the engine puts in that seat's view alone.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from engine import SPECTATOR, Duel, Event, Explore, Mark, MoveLine, Outcome, View, cell_name, diff, geometry, verify
from engine.encoding import CHAR_CLAIMS, HIDDEN, OWN_WRONG_MARK, UNCLAIMED_MINE
from engine.events import RESIGNATION, TIMEOUT
from engine.rules import Claim, Verdict

from .room import Room, Status

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
TEMPLATES_DIR = WEB_DIR / "templates"

SNAPSHOT_MARK = "<!--snapshot-->"
"""First bytes of every snapshot frame: lets a browser connection tell a snapshot (which
resets its selection) from an update without parsing HTML."""

MINUS = "\u2212"


def make_env(templates: Path = TEMPLATES_DIR) -> Environment:
    """The one Jinja2 environment of the browser edge (autoescape on for every template)."""
    env = Environment(
        loader=FileSystemLoader(str(templates)),
        autoescape=select_autoescape(["html", "xml"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.globals["asset"] = lambda path: f"/static/{path}"  # pages.py installs the versioned one
    env.filters["signed"] = score_text
    return env


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
        n = sum(1 for nb in geometry(view.width, view.height).neighbours((r, c)) if nb in mines)
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
    a, b = scores
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


def player_looks(room: Room, viewer: int, now_ms: int) -> list[PlayerLook]:
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
        )
        for seat in (0, 1)
    ]


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

    @property
    def first(self) -> bool:
        return self.at == 0

    @property
    def last(self) -> bool:
        return self.at >= self.total

    def href(self, at: int) -> str:
        return f"/g/{self.room_id}/replay?at={max(0, min(at, self.total))}"


def replay_view(room: Room, at: int) -> tuple[View, int]:
    """The public view after the first ``at`` log entries of a finished game, with the end's
    secrets added (the whole layout, every wrong mark made so far): a finished game has no
    secrets left. Returns the view and the clamped ``at``. Raises ``ValueError`` before the end."""
    if room.status is not Status.OVER:
        raise ValueError("replays are for finished games")
    log = room.duel.log
    at = max(0, min(at, len(log)))
    if at == len(log):
        return room.view(SPECTATOR), at
    duel = Duel.replay(room.duel.setup, log[:at])
    view = duel.view(SPECTATOR)
    marks = tuple(tuple(sorted(m)) for m in duel.wrong_marks)
    lines = tuple(
        MoveLine(ln.number, ln.seat, ln.action, ln.cell, ln.verdict, ln.points, ln.auto_revealed)
        for ln in duel.lines
    )
    view = replace(
        view,
        mines=tuple(sorted(duel.setup.mines)),
        wrong_marks=(marks[0], marks[1]),
        moves=lines,
    )
    return view, at


# ---------------------------------------------------------------------- the codec


class HtmlCodec:
    """The ``"html"`` codec of :mod:`server.fanout`: HTML fragments swapped by id."""

    name = "html"

    def __init__(self, env: Environment | None = None) -> None:
        self.env = env or make_env()
        self._macros: Any = None

    @property
    def m(self) -> Any:
        """The macros of ``_room.html`` (loaded once)."""
        if self._macros is None:
            self._macros = self.env.get_template("_room.html").module
        return self._macros

    # ------------------------------------------------------------------ areas

    def areas(self, room: Room, viewer: int, now_ms: int | None = None, at: int | None = None) -> dict[str, Markup]:
        """Every dynamic element of the room page for ``viewer``, by id.

        ``at``: for a finished game, show the replay position after ``at`` moves instead of
        the final board.
        """
        now = _now_ms() if now_ms is None else now_ms
        view = room.view(viewer)
        names = player_names(room)
        over = room.status is Status.OVER
        playable = viewer in (0, 1) and room.status is Status.PLAYING
        m = self.m
        out = {
            "status": m.status(status_look(room, viewer), room.id, viewer),
            "players": m.players(player_looks(room, viewer, now)),
        }
        if over:
            # a finished game: the final board (or a replay position) and the replay bar
            parts = self.replay(room, len(room.duel.log) if at is None else at)
            out.update({k: parts[k] for k in ("board", "mines-left", "moves")})
            out["endgame"] = m.endgame({
                "room_id": room.id,
                "rematch": room.rematch,
                "seated": viewer in (0, 1),
                "replay": parts["look"],
                "names": names,
            })
        else:
            out.update({
                "board": m.board(board_looks(view, names, playable=playable), view.width, playable, over),
                "mines-left": m.mines_left(view.mines_left, view.total_mines),
                "moves": m.moves([move_text(line, names) for line in reversed(view.moves)]),
                "endgame": m.endgame(None),
            })
        out.update({
            "fair": m.fair(fair_look(view)),
            "notice": m.notice(""),
            "hb": m.heartbeat(),
            "seen-v": m.seen_version(room.version),
            "selection": m.selection(None, playable, False),
        })
        return out

    def selection_panel(self, panel: dict[str, str] | None, playable: bool, confirming_resign: bool = False) -> str:
        """Only the selection panel (``panel``: ``{"name": "f6", "action": "explore"}`` or ``None``)."""
        return str(self.m.selection(panel, playable, confirming_resign))

    def replay(self, room: Room, at: int) -> dict[str, Any]:
        """The board, move list and replay bar of a finished game after ``at`` log entries
        (``look`` is the :class:`ReplayLook`; the others are elements swapped by id)."""
        view, at = replay_view(room, at)
        names = player_names(room)
        log = room.duel.log
        shown = sum(1 for _seat, move in log[:at] if isinstance(move, (Explore, Mark)))
        final = room.view(SPECTATOR)
        if at == 0:
            line = "The start"
        elif isinstance(log[at - 1][1], (Explore, Mark)):
            line = move_text(final.moves[shown - 1], names).text
        else:
            line = outcome_text(final.outcome, view.scores, names, SPECTATOR) if final.outcome else ""
        look = ReplayLook(room.id, at, len(log), view.scores, line)
        m = self.m
        return {
            "board": m.board(board_looks(view, names, playable=False, end="final" if at == len(log) else "replay"),
                             view.width, False, True),
            # the move list as it stood after move ``at``, newest (the current one) first
            "moves": m.moves([move_text(x, names) for x in reversed(final.moves[:shown])],
                             shown if at < len(log) else None),
            "mines-left": m.mines_left(view.mines_left, view.total_mines),
            "replay": m.replay(look, names),
            "look": look,
        }

    # ------------------------------------------------------------------ Codec

    def snapshot(self, room: Room, viewer: int) -> str:
        parts = self.areas(room, viewer)
        return SNAPSHOT_MARK + "".join(parts.values())

    def update(self, old: Room, new: Room, viewer: int, events: Sequence[Event]) -> str:
        if (
            old.status is not Status.PLAYING
            or new.status is not Status.PLAYING
            or old.players != new.players
            or old.duel.commitment != new.duel.commitment
        ):
            # joins, the end, rematch offers: rare, so the whole picture
            return self.snapshot(new, viewer)
        a, b = old.view(viewer), new.view(viewer)
        change = diff(a, b)
        if "moves" in change.changed:
            return self.snapshot(new, viewer)
        names = player_names(new)
        m = self.m
        out = [
            m.cell(cell_look(b, r, c, names, playable=viewer in (0, 1)))
            for r, c, _ch in change.cells
        ]
        out.append(m.players(player_looks(new, viewer, _now_ms())))
        out.append(m.status(status_look(new, viewer), new.id, viewer))
        if b.mines_left != a.mines_left:
            out.append(m.mines_left(b.mines_left, b.total_mines))
        if change.moves:
            lines = [move_text(line, names) for line in reversed(change.moves)]
            out.append(m.moves_prepend(lines))
        if viewer in (0, 1):
            out.append(m.seen_version(new.version))
        return "".join(out)

    def presence(self, room: Room, spectators: int) -> str:
        return str(self.m.spectators(spectators))

    def error(self, code: str, message: str, v: int | None = None) -> str:
        """The page keeps its version in ``#seen-v`` (snapshots and updates set it): ``v`` adds nothing here."""
        out = str(self.m.notice(message, "error"))
        if code == "unavailable":  # Redis is unreachable: the banner too (see heartbeat)
            out += str(self.m.heartbeat(True))
        return out

    # ------------------------------------------------------------------ per connection

    def notice(self, message: str, kind: str = "info") -> str:
        return str(self.m.notice(message, kind))

    def heartbeat(self, room: Room | None = None, now_ms: int | None = None, interrupted: bool = False) -> str:
        """The heartbeat element (restarts the "connection lost" countdown), plus the clocks
        at ``now_ms`` when ``room`` has a running one. ``interrupted``: the server cannot reach
        its store; the element then shows the "service interrupted" banner at once."""
        out = str(self.m.heartbeat(interrupted))
        if room is not None and room.clock is not None:
            looks = clock_looks(room, _now_ms() if now_ms is None else now_ms)
            if looks:
                out += "".join(str(self.m.clock(look)) for look in looks)
        return out

    def selection(
        self,
        room: Room,
        viewer: int,
        cells: Iterable[tuple[int, int]],
        selected: tuple[tuple[int, int], str] | None,
        *,
        focus: tuple[int, int] | None = None,
        confirming_resign: bool = False,
    ) -> str:
        """One connection's selection: the given cells redrawn (with the selection on the
        selected one, ``autofocus`` on ``focus``) and the selection panel."""
        view = room.view(viewer)
        names = player_names(room)
        playable = viewer in (0, 1) and room.status is Status.PLAYING
        out = []
        for cell in dict.fromkeys(cells):
            sel = selected[1] if selected is not None and selected[0] == cell else None
            out.append(self.m.cell(cell_look(view, *cell, names, playable=playable, selected=sel,
                                             autofocus=cell == focus)))
        panel = None
        if selected is not None:
            panel = {"name": cell_name(selected[0]), "action": selected[1]}
        out.append(self.m.selection(panel, playable, confirming_resign))
        return "".join(str(x) for x in out)


def oob(element: str) -> str:
    """``element`` marked for an out-of-band swap by id (htmx HTTP responses need the marker;
    websocket frames do not: the ws extension swaps every top-level element by id)."""
    return re.sub(r"^<([a-z]+) ", r'<\1 hx-swap-oob="true" ', str(element), count=1)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


AREAS = ("status", "players", "board", "mines-left", "moves", "fair", "endgame", "notice", "hb", "seen-v", "selection")
"""The ids of the dynamic areas of a room page (``spectators`` is sent by presence frames)."""
