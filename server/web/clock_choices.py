"""The clocks a page offers (the home page's challenge, a player's page's "Challenge this
player"), in one table: each choice's form value, its label and the clock it makes."""

from __future__ import annotations

from engine.clock import Clock

from .i18n import N_

CLOCK_CHOICES: tuple[tuple[str, str], ...] = (
    ("none", N_("No clock")),
    ("60+1", N_("1 min + 1 s per move")),
    ("180+2", N_("3 min + 2 s per move")),
    ("300+0", N_("5 min")),
    ("300+3", N_("5 min + 3 s per move")),
    ("600+5", N_("10 min + 5 s per move")),
    ("1d", N_("1 day per move")),
    ("3d", N_("3 days per move")),
    ("7d", N_("7 days per move")),
)
"""(form value, label); a rated game needs one with a clock. The labels are English, marked
for the catalogs; the templates translate them where shown (``{{ _(label) }}``)."""
CLOCKS: dict[str, tuple[int, int] | tuple[str, int]] = {
    "60+1": (60_000, 1_000),
    "180+2": (180_000, 2_000),
    "300+0": (300_000, 0),
    "300+3": (300_000, 3_000),
    "600+5": (600_000, 5_000),
    "1d": ("days", 1),
    "3d": ("days", 3),
    "7d": ("days", 7),
}
"""What each clock choice but ``none`` (untimed) makes."""


def clock_of(field: str) -> Clock | None:
    """The clock of a form's choice (``none``: untimed); raises ``ValueError`` for a choice no
    page offers, rather than making an untimed game nobody asked for."""
    if field == "none":
        return None
    choice = CLOCKS.get(field)
    if choice is None:
        raise ValueError(f"no such clock choice: {field!r}")
    if choice[0] == "days":
        return Clock.correspondence(int(choice[1]))
    return Clock.new(int(choice[0]), choice[1])
