"""Inspectors for "secrets never leak": what a frame or page may say to one viewer, checked
against the truth read from the referee :class:`engine.Duel`'s own state (its ``numbers``,
``claims``, ``wrong_marks``, ``lines``, ``setup``) — never from ``engine.view``, whose output
is part of what is under test.

Before the end, a frame for viewer ``v`` may show a cell only as the public board has it
(numbers, claimed mines) plus ``v``'s own wrong marks; it may not contain the salt (hex or
raw), the position of a hidden mine, or another seat's wrong mark (board, move list, events,
labels, classes). After the end everything is published and the commitment verifies.

:class:`Inspector` counts what it checked (frames, bytes, cells) for docs/RELIABILITY.md.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import msgpack

from engine import SPECTATOR, Duel, cell_name, verify
from engine.encoding import CLAIM_CHARS, HIDDEN, OWN_WRONG_MARK, UNCLAIMED_MINE
from engine.rules import Verdict

Cell = tuple[int, int]


class Leak(AssertionError):
    """A frame said more than its viewer may know (or something other than the truth)."""


def expect(condition: bool, what: str, *context: Any) -> None:
    if not condition:
        raise Leak(f"{what}: {context!r}"[:2000])


@dataclass(frozen=True)
class Truth:
    """One version of a game as it really is (secrets included)."""

    version: int
    over: bool
    width: int
    height: int
    mines: frozenset[Cell]
    numbers: dict[Cell, int]
    claims: dict[Cell, tuple[int, Any]]
    wrong_marks: tuple[frozenset[Cell], frozenset[Cell]]
    lines: tuple[Any, ...]
    """The engine's full-knowledge move lines (``Line``: number, seat, action, cell, verdict, ...)."""
    salt: str
    commitment: str

    @classmethod
    def of(cls, duel: Duel, version: int) -> "Truth":
        s = duel.setup
        return cls(version, duel.outcome is not None, s.width, s.height, s.mines, dict(duel.numbers),
                   dict(duel.claims), (frozenset(duel.wrong_marks[0]), frozenset(duel.wrong_marks[1])),
                   tuple(duel.lines), s.salt, duel.commitment)

    def char(self, viewer: int, cell: Cell) -> str:
        """The one character ``viewer`` may see on ``cell`` (the encoding of docs/PROTOCOL.md)."""
        if cell in self.numbers:
            return str(self.numbers[cell])
        if cell in self.claims:
            seat, claim = self.claims[cell]
            return CLAIM_CHARS[seat][claim]
        if self.over and cell in self.mines:
            return UNCLAIMED_MINE
        if viewer != SPECTATOR and cell in self.wrong_marks[viewer]:
            return OWN_WRONG_MARK
        return HIDDEN

    def cell_hidden_from(self, viewer: int, line: Any) -> bool:
        """Whether a move line's cell is withheld from ``viewer`` (another seat's wrong mark)."""
        return not self.over and line.verdict is Verdict.BLUBB and line.seat != viewer

    @property
    def salt_bytes(self) -> tuple[bytes, ...]:
        return (self.salt.encode(), self.salt[:16].encode(), self.salt.upper().encode(), bytes.fromhex(self.salt))


# ---------------------------------------------------------------------- msgpack / JSON data

VIEW_KEYS = {"viewer", "ruleset", "width", "height", "total_mines", "rows", "scores", "phase", "to_move",
             "outcome", "moves", "wrong_marks", "last_opened", "commitment", "salt", "mines"}
ROOM_KEYS = {"id", "kind", "status", "ruleset", "players", "clock", "rematch", "rematch_offer", "rematch_declined", "rated", "created_ms",
             "started_ms", "ended_ms"}
CLOCK_KEYS = {"initial_ms", "increment_ms", "remaining_ms", "running", "server_ms"}
DIFFED = {"scores", "phase", "to_move", "outcome", "wrong_marks", "last_opened", "salt", "mines", "moves"}
EVENT_KEYS = {
    "move_played": {"t", "number", "seat", "action", "cell", "verdict", "points", "auto_revealed"},
    "wrong_mark_placed": {"t", "seat", "cell"},
    "cells_revealed": {"t", "cells", "cause"},
    "mine_shown": {"t", "cell", "seat", "claim"},
    "turn_changed": {"t", "to_move"},
    "game_ended": {"t", "outcome", "scores", "mines", "salt", "wrong_marks"},
}


def _cells(items: Any) -> list[Cell]:
    return [(r, c) for r, c in items]


def check_room(room: dict[str, Any]) -> None:
    expect(set(room) == ROOM_KEYS, "room keys", sorted(room))
    for p in room["players"]:
        expect(p is None or set(p) == {"id", "name"}, "player keys", p)
    expect(room["clock"] is None or set(room["clock"]) == CLOCK_KEYS, "clock keys", room["clock"])


def check_lines(lines: list[Any], viewer: int, truth: Truth) -> None:
    for data in lines:
        number, seat, action, cell, verdict, points, auto = data
        line = truth.lines[number - 1]
        expect((seat, action, verdict, points, auto) == (line.seat, line.action.value, line.verdict.value,
                                                          line.points, line.auto_revealed), "move line", data)
        if truth.cell_hidden_from(viewer, line):
            expect(cell is None, "another seat's wrong mark in the move list", viewer, data)
        else:
            expect(cell is not None and tuple(cell) == line.cell, "move line cell", data, line)


def check_marks(marks: Any, viewer: int, truth: Truth) -> None:
    for seat in (0, 1):
        if truth.over or seat == viewer:
            expect(_cells(marks[seat]) == sorted(truth.wrong_marks[seat]), "wrong marks", seat, marks)
        else:
            expect(list(marks[seat]) == [], "another seat's wrong marks", viewer, marks)


def check_published(salt: Any, mines: Any, truth: Truth) -> None:
    """Before the end nothing; after it the whole layout and the salt, which verify."""
    if not truth.over:
        expect(salt is None and mines is None, "salt or layout before the end", salt, mines)
        return
    expect(salt == truth.salt and sorted(_cells(mines)) == sorted(truth.mines), "published layout", salt)
    expect(verify(truth.commitment, truth.width, truth.height, _cells(mines), salt), "commitment does not verify")


def check_view(view: dict[str, Any], viewer: int, truth: Truth) -> int:
    """A whole view (snapshot, HTTP game): every cell, line and field. Returns cells checked."""
    expect(set(view) == VIEW_KEYS, "view keys", sorted(view))
    expect(view["viewer"] == viewer and view["commitment"] == truth.commitment, "viewer/commitment")
    rows = view["rows"]
    expect(len(rows) == truth.height, "rows")
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            expect(ch == truth.char(viewer, (r, c)), "cell", viewer, (r, c), ch, truth.char(viewer, (r, c)))
    expect(len(view["moves"]) == len(truth.lines), "move count")
    check_lines(view["moves"], viewer, truth)
    check_marks(view["wrong_marks"], viewer, truth)
    check_published(view["salt"], view["mines"], truth)
    for cell in _cells(view["last_opened"]):
        expect(cell in truth.numbers or cell in truth.claims, "last_opened names a hidden cell", cell)
    return truth.width * truth.height


def check_events(events: list[dict[str, Any]], viewer: int, truth: Truth) -> None:
    for e in events:
        t = e.get("t")
        expect(t in EVENT_KEYS and set(e) == EVENT_KEYS[t], "event", e)
        if t == "move_played":
            line = truth.lines[e["number"] - 1]
            if line.verdict is Verdict.BLUBB:  # the public twin; the author gets wrong_mark_placed
                expect(e["cell"] is None, "a wrong mark's cell in a move event", viewer, e)
            else:
                expect(tuple(e["cell"]) == line.cell, "move event cell", e)
        elif t == "wrong_mark_placed":
            expect(e["seat"] == viewer, "wrong_mark_placed sent to somebody else", viewer, e)
            expect(tuple(e["cell"]) in truth.wrong_marks[viewer], "wrong mark event", e)
        elif t == "cells_revealed":
            for r, c, n in e["cells"]:
                expect(truth.numbers.get((r, c)) == n, "revealed cell", (r, c, n))
        elif t == "mine_shown":
            cell = tuple(e["cell"])
            expect(cell in truth.claims and truth.claims[cell][0] == e["seat"], "mine_shown", e)
        elif t == "game_ended":
            expect(truth.over, "game_ended before the end")
            check_published(e["salt"], e["mines"], truth)
            expect([sorted(_cells(m)) for m in e["wrong_marks"]] == [sorted(m) for m in truth.wrong_marks],
                   "game_ended wrong marks")


def check_diff(d: dict[str, Any], viewer: int, truth: Truth) -> int:
    expect(set(d) == {"cells", "changed", "moves"}, "diff keys", sorted(d))
    for r, c, ch in d["cells"]:
        expect(ch == truth.char(viewer, (r, c)), "diff cell", viewer, (r, c), ch, truth.char(viewer, (r, c)))
    changed = d["changed"]
    expect(set(changed) <= DIFFED, "diff fields", sorted(changed))
    if "salt" in changed or "mines" in changed:
        check_published(changed.get("salt"), changed.get("mines"), truth)
    if "wrong_marks" in changed:
        check_marks(changed["wrong_marks"], viewer, truth)
    for cell in _cells(changed.get("last_opened", [])):
        expect(cell in truth.numbers or cell in truth.claims, "last_opened names a hidden cell", cell)
    check_lines(changed.get("moves", []), viewer, truth)
    check_lines(d["moves"], viewer, truth)
    return len(d["cells"])


class Inspector:
    """Checks frames and counts what it checked."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def raw(self, data: bytes | str, truth: Truth) -> None:
        blob = data.encode() if isinstance(data, str) else data
        self.counts["bytes"] += len(blob)
        for marker in (b"Traceback", b'File "/'):
            expect(marker not in blob, "a stack trace in a frame")
        if not truth.over:
            for secret in truth.salt_bytes:
                expect(secret not in blob, "the salt before the end")

    def msgpack(self, frame: bytes, viewer: int, truth: Truth) -> dict[str, Any]:
        """One msgpack frame for ``viewer``; ``truth`` is the game at the frame's version."""
        self.raw(frame, truth)
        data = msgpack.unpackb(frame, raw=False, strict_map_key=False)
        self.json(data, viewer, truth, kind="msgpack")
        return data

    def json(self, data: dict[str, Any], viewer: int, truth: Truth, kind: str = "json") -> None:
        t = data.get("t")
        if t == "snapshot" or (t is None and "view" in data):  # HTTP game JSON has no t
            keys = {"t", "v", "you", "room", "view"} if t else {"v", "you", "room", "view", "commitment"}
            expect(set(data) == keys, "snapshot keys", sorted(data))
            expect(data["you"] == viewer and data["v"] == truth.version, "snapshot you/v", data["you"], data["v"])
            check_room(data["room"])
            self.counts["cells"] += check_view(data["view"], viewer, truth)
            self.counts[f"{kind}_snapshots"] += 1
        elif t == "update":
            expect(set(data) == {"t", "v", "room", "events", "diff"}, "update keys", sorted(data))
            expect(data["v"] == truth.version, "update v")
            check_room(data["room"])
            check_events(data["events"], viewer, truth)
            self.counts["cells"] += check_diff(data["diff"], viewer, truth)
            self.counts[f"{kind}_updates"] += 1
        elif t == "presence":
            expect(set(data) == {"t", "v", "spectators", "away"}, "presence keys", sorted(data))
            expect(all(t is None or isinstance(t, int) for t in data["away"]), "presence away", data["away"])
            self.counts[f"{kind}_other"] += 1
        elif t == "error" or (t is None and "error" in data):
            body = data if t == "error" else data["error"]
            expect(set(body) <= {"t", "v", "code", "message"} and isinstance(body["message"], str), "error", data)
            expect(body.get("v") is None or isinstance(body["v"], int), "error v", data)
            self.counts[f"{kind}_errors"] += 1
        else:
            raise Leak(f"unknown frame {data!r}"[:300])
        self.counts["frames"] += 1

    # ------------------------------------------------------------------ HTML

    def html(self, text: str, viewer: int, truth: Truth, names: tuple[str, str] = ("Anna", "Ben")) -> None:
        """An HTML frame or page for ``viewer``: every cell button, move line and the fairness box."""
        self.raw(text, truth)
        if not truth.over:
            for phrase in ("wrong mark by", "hidden mine", "ghost", 'id="fair-result"', "never opened"):
                expect(phrase not in text, "an end-of-game detail before the end", phrase)
        cells = 0
        for attrs, inner in CELL_RE.findall(text):
            a = {k: html.unescape(v) if "&" in v else v for k, v in ATTR_RE.findall(attrs)}
            r, c = map(int, a["id"][5:].split("-"))
            check_cell(set(a["class"].split()), a["aria-label"], inner, (r, c), viewer, truth)
            cells += 1
        for number, seat, css, where in MOVE_RE.findall(text) + TOAST_RE.findall(text):
            line = truth.lines[int(number) - 1]
            expect((int(seat), css) == (line.seat, line.verdict.name.lower()), "html move line", number)
            expect(html.unescape(where) == ("?" if truth.cell_hidden_from(viewer, line) else cell_name(line.cell)),
                   "html move line cell", viewer, number, where)
        if 'id="fair"' in text:
            check_fair(text, truth)
        self.counts["cells"] += cells
        self.counts["html_frames"] += 1
        self.counts["frames"] += 1


CELL_RE = re.compile(r'<button ([^>]*\bid="cell-\d+-\d+"[^>]*)>(.*?)</button>', re.S)
ATTR_RE = re.compile(r'([a-z-]+)="([^"]*)"')
MOVE_RE = re.compile(r'<li id="move-(\d+)" class="mv p(\d) (gut|autsch|blubb)[^"]*"[^>]*>.*?<span class="at">([^<]*)</span>',
                     re.S)
TOAST_RE = re.compile(r'<span data-move="(\d+)" class="toast-line p(\d) (gut|autsch|blubb)">.*?<span class="at">([^<]*)</span>',
                      re.S)
"""The move toast's lines (server/web/html_codec.py), checked like the move list's."""
DIGIT_RE = re.compile(r"\d")
END_CLASSES = {"ghost", "ghost-mine", "wrong", "unclaimed"}


def check_cell(classes: set[str], label: str, inner: str, cell: Cell, viewer: int, truth: Truth) -> None:
    r, c = cell
    name = cell_name(cell)
    board_viewer = SPECTATOR if truth.over else viewer  # a finished game's board is the public one
    ch = truth.char(board_viewer, cell)
    expect(label.startswith(name + ", "), "cell label", label)
    if not truth.over:
        expect(not classes & END_CLASSES and "wrong mark by" not in label, "end classes before the end",
               cell, classes, label)
    if ch == HIDDEN and not truth.over:
        expect("hidden" in classes and not classes & {"open", "mine", "marked", "hit", "wrong-own"},
               "hidden cell classes", viewer, cell, classes)
        expect(re.fullmatch(rf"{name}, hidden(, selected to (explore|mark))?", label) is not None,
               "hidden cell label", viewer, cell, label)
        expect(not DIGIT_RE.search(inner), "a hidden cell shows a number", cell, inner)
    elif ch == OWN_WRONG_MARK:
        expect({"hidden", "wrong-own"} <= classes and "your wrong mark" in label, "own wrong mark", cell, classes)
    elif ch.isdigit():
        expect({"open", f"n{ch}"} <= classes and label.startswith(f"{name}, {ch}"), "open cell", cell, classes, label)
    elif ch == UNCLAIMED_MINE:
        expect({"mine", "unclaimed"} <= classes, "unclaimed mine at the end", cell, classes)
    elif ch != HIDDEN:
        seat, claim = truth.claims[cell]
        expect({"mine", claim.value, f"p{seat}"} <= classes, "claimed mine", cell, classes, claim)
    if "your wrong mark" in label or "wrong-own" in classes:
        expect(viewer != SPECTATOR and cell in truth.wrong_marks[viewer], "somebody else's wrong mark shown",
               viewer, cell)
    if truth.over:
        expect(("mine" in classes) == (cell in truth.mines), "mines at the end", cell, classes)
        for seat in (0, 1):
            if cell in truth.wrong_marks[seat]:
                expect({"wrong", f"p{seat}"} <= classes, "a wrong mark not shown at the end", cell, seat, classes)


FAIR_RE = {
    "fingerprint": re.compile(r'fingerprint <code>([0-9a-f]{64})</code>'),
    "salt": re.compile(r'salt <code>([0-9a-f]+)</code>'),
    "mines": re.compile(r'mines <code>([a-z0-9 ]*)</code>'),
}


def check_fair(text: str, truth: Truth) -> None:
    if not truth.over:
        expect('class="fair"' in text and "verified" not in text.split('id="fair"', 1)[1][:200], "fairness box")
        return
    found = {k: rx.search(text) for k, rx in FAIR_RE.items()}
    expect(all(found.values()), "the end publishes fingerprint, salt and mines", sorted(k for k, v in found.items() if v))
    from engine import parse_cell_name

    mines = [parse_cell_name(n) for n in found["mines"].group(1).split()]
    salt = found["salt"].group(1)
    expect(salt == truth.salt and sorted(mines) == sorted(truth.mines), "published layout in the page")
    expect(verify(found["fingerprint"].group(1), truth.width, truth.height, mines, salt), "page commitment verifies")
    expect("fair verified" in text, "fairness box says verified")
