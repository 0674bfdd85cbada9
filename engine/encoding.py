"""The one-character-per-cell board encoding shared by snapshots, views and the wire.

``.`` hidden, ``0``-``8`` a revealed number, ``A``/``B`` a mine marked by seat 0/1,
``a``/``b`` a mine hit by seat 0/1, ``x`` the viewer's own wrong mark on a hidden cell,
``*`` a mine nobody claimed (shown only once the game is over).
"""

from __future__ import annotations

from .rules import Claim

HIDDEN = "."
OWN_WRONG_MARK = "x"
UNCLAIMED_MINE = "*"

CLAIM_CHARS: tuple[dict[Claim, str], dict[Claim, str]] = (
    {Claim.MARKED: "A", Claim.HIT: "a"},
    {Claim.MARKED: "B", Claim.HIT: "b"},
)
CHAR_CLAIMS: dict[str, tuple[int, Claim]] = {
    ch: (seat, claim) for seat, table in enumerate(CLAIM_CHARS) for claim, ch in table.items()
}
