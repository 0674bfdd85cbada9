"""The colours of web/static/app.css meet WCAG 2.2 AA, in the light theme and the dark one: text
4.5:1 against what it sits on (1.4.3), and the board's states 3:1 against their neighbours
(1.4.11: a hidden tile's rim against an opened cell, the last move's ring, the flags). The
custom properties of both themes are read from the stylesheet itself (the dark theme is the
light one with the overrides of its ``prefers-color-scheme: dark`` block), so a later change
of a colour that breaks a pair fails here. No browser: the relative luminance and the contrast
ratio are WCAG's formulas, written out below."""

from __future__ import annotations

import re
from functools import cache

import pytest

from tests.conftest import ROOT

CSS = ROOT / "web" / "static" / "app.css"
TEXT = 4.5
NON_TEXT = 3.0
WHITE = "#ffffff"


# ---------------------------------------------------------------- WCAG's formulas


def rgb(colour: str) -> tuple[float, float, float]:
    """``#rgb`` or ``#rrggbb`` as three channels in 0..1."""
    value = colour.strip().lstrip("#")
    if len(value) == 3:
        value = "".join(c * 2 for c in value)
    assert re.fullmatch(r"[0-9a-fA-F]{6}", value), colour
    return tuple(int(value[i:i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]


def luminance(colour: str | tuple[float, float, float]) -> float:
    """WCAG 2.x relative luminance of an sRGB colour."""
    channels = rgb(colour) if isinstance(colour, str) else colour

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ratio(a: str | tuple[float, float, float], b: str | tuple[float, float, float]) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def over(colour: tuple[int, int, int], alpha: float, backdrop: str) -> tuple[float, float, float]:
    """``rgba(colour, alpha)`` painted over ``backdrop`` (what a translucent stripe shows)."""
    return tuple(alpha * c / 255 + (1 - alpha) * b for c, b in zip(colour, rgb(backdrop), strict=True))  # type: ignore[return-value]


def test_the_formulas_give_wcags_known_values() -> None:
    assert ratio("#000", "#fff") == pytest.approx(21)
    assert ratio("#fff", "#fff") == pytest.approx(1)
    assert ratio("#767676", "#fff") == pytest.approx(4.54, abs=0.01)  # the lightest grey passing on white
    assert ratio("#959595", "#fff") == pytest.approx(3.0, abs=0.01)


# ---------------------------------------------------------------- the stylesheet


@cache
def css() -> str:
    return re.sub(r"/\*.*?\*/", "", CSS.read_text(), flags=re.DOTALL)


def block_after(text: str, opening: str) -> str:
    """The inside of the braces that follow ``opening`` (its first occurrence), nested ones kept."""
    start = text.index(opening) + len(opening)
    start = text.index("{", start - 1) + 1
    depth = 1
    for at in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[at], 0)
        if depth == 0:
            return text[start:at]
    raise AssertionError(f"unbalanced braces after {opening!r}")


def dark_block() -> str:
    return block_after(css(), "@media (prefers-color-scheme: dark)")


def properties(block: str) -> dict[str, str]:
    return {name: value.strip() for name, value in re.findall(r"(--[\w-]+)\s*:\s*([^;]+);", block)}


@cache
def theme(name: str) -> dict[str, str]:
    """The custom properties of ``:root`` in the light theme, or with the dark overrides."""
    light = properties(block_after(css(), ":root"))
    if name == "light":
        return light
    return {**light, **properties(block_after(dark_block(), ":root"))}


def declaration(selector: str, prop: str, text: str | None = None) -> str | None:
    """The value of ``prop`` in the last rule whose selector list has ``selector`` (in ``text``,
    the whole sheet by default; rules nested in an at-rule included)."""
    found = None
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css() if text is None else text):
        if selector in (s.strip() for s in selectors.split(",")):
            for name, value in re.findall(r"(?:^|;)\s*([\w-]+)\s*:\s*([^;]+)", body):
                if name == prop:
                    found = value.strip()
    return found


def light_sheet() -> str:
    """The sheet without its dark block (the rules of the light theme)."""
    return css().replace(dark_block(), "")


def colour_of(theme_name: str, selector: str, prop: str) -> str:
    """A rule's colour in a theme: the dark block's rule wins in the dark theme; ``var(--x)``
    resolves to the theme's property."""
    value = (declaration(selector, prop, dark_block()) if theme_name == "dark" else None) or declaration(selector, prop, light_sheet())
    assert value is not None, (selector, prop)
    match = re.fullmatch(r"var\((--[\w-]+)\)", value)
    return theme(theme_name)[match.group(1)] if match else value


def stripe(selector: str) -> tuple[tuple[int, int, int], float]:
    """The colour and alpha of the first ``rgba()`` in the rule's background (its stripes)."""
    value = declaration(selector, "background") or declaration(selector, "background-image")
    assert value is not None, selector
    r, g, b, a = re.search(r"rgba\(\s*(\d+),\s*(\d+),\s*(\d+),\s*([\d.]+)\s*\)", value).groups()
    return (int(r), int(g), int(b)), float(a)


# ---------------------------------------------------------------- the pairs

THEMES = ("light", "dark")


def failures(pairs: list[tuple[str, str | tuple[float, float, float], str | tuple[float, float, float]]], least: float) -> list[str]:
    return [f"{label}: {ratio(a, b):.2f}:1 < {least}:1" for label, a, b in pairs if ratio(a, b) < least]


def text_pairs(name: str) -> list[tuple[str, object, object]]:
    t = theme(name)
    pages = {"--bg": t["--bg"], "--surface": t["--surface"], "--surface-2": t["--surface-2"]}
    current = colour_of(name, ".mv.current", "background")  # the replay's highlighted move
    pairs = []
    for fg in ("--ink", "--muted", "--focus", "--good", "--bad", "--blubb", "--sel-explore-ink", "--sel-mark-ink"):
        pairs += [(f"{fg} on {bg}", t[fg], colour) for bg, colour in pages.items()]
    for fg in ("--good", "--bad", "--blubb"):  # verdicts in the move list, on the current move too
        pairs.append((f"{fg} on .mv.current", t[fg], current))
    # numbers on opened cells, auto-opened ones, and the hatching of never-opened ones (.ghost)
    hatch_colour, hatch_alpha = stripe(".cell.ghost")
    for n in range(1, 9):
        fg = t[f"--n{n}"]
        pairs += [(f"--n{n} on --open", fg, t["--open"]), (f"--n{n} on --auto", fg, t["--auto"]),
                  (f"--n{n} on the ghost hatching", fg, over(hatch_colour, hatch_alpha, t["--open"]))]
    # white text: a hit mine's badge (on its colour and its stripes), the buttons on colour
    hit_colour, hit_alpha = stripe(".cell.hit")
    for seat in ("p0", "p1"):
        fill = colour_of(name, f".cell.hit.{seat}", "background-color")
        pairs += [(f".cell.hit.{seat} .badge", WHITE, fill),
                  (f".cell.hit.{seat} .badge on a stripe", WHITE, over(hit_colour, hit_alpha, fill))]
    for bg in ("--danger", "--sel-explore", "--sel-mark", "--accent"):
        pairs.append((f"white on {bg}", WHITE, t[bg]))
    pairs.append(("Fair play verified", colour_of(name, ".fair.verified h2", "color"), t["--surface"]))
    return pairs


def non_text_pairs(name: str) -> list[tuple[str, object, object]]:
    t = theme(name)
    tiles = {"--tile-top": t["--tile-top"], "--tile-bottom": t["--tile-bottom"]}
    pairs = [(f"--tile-edge against {bg}", t["--tile-edge"], t[bg]) for bg in ("--open", "--auto")]
    for bg in (*tiles, "--open", "--auto", "--p0-soft", "--p1-soft"):  # what the last move can be
        pairs.append((f"--last on {bg}", t["--last"], t[bg]))
    last_on_hit = colour_of(name, ".cell.last.hit", "outline-color")
    for seat in ("p0", "p1"):
        pairs.append((f".cell.last.hit on .cell.hit.{seat}", last_on_hit, colour_of(name, f".cell.hit.{seat}", "background-color")))
    for flag in ("--flag", "--flag-found", "--flag-wrong"):  # the classic game's flags on tiles
        pairs += [(f"{flag} on {bg}", t[flag], colour) for bg, colour in tiles.items()]
    for seat in ("p0", "p1"):  # a duel's marks: the flag on the seat's tint
        pairs.append((f".cell.marked.{seat} flag", colour_of(name, f".cell.marked.{seat}::after", "background"), t[f"--{seat}-soft"]))
    return pairs


@pytest.mark.parametrize("name", THEMES)
def test_text_has_4_5_to_1(name: str) -> None:
    assert failures(text_pairs(name), TEXT) == []


@pytest.mark.parametrize("name", THEMES)
def test_the_boards_states_have_3_to_1(name: str) -> None:
    assert failures(non_text_pairs(name), NON_TEXT) == []


def test_the_checked_colours_are_the_ones_drawn() -> None:
    """The properties above are what the rules paint with: a tile's rim, the last move's ring,
    the flags, the verdicts, the selection's words, the numbers and the links."""
    rim = declaration(".cell.hidden", "box-shadow")
    assert rim is not None and re.match(r"inset 0 0 0 (\d+)px var\(--tile-edge\)", rim), rim
    assert int(re.match(r"inset 0 0 0 (\d+)px", rim).group(1)) >= 2
    assert declaration(".cell.last", "outline") == "3px solid var(--last)"
    assert declaration(".cell.flag::after", "background") == "var(--flag)"
    assert declaration(".cell.flag.found::after", "background") == "var(--flag-found)"
    assert declaration(".cell.wrong-flag::after", "background") == "var(--flag-wrong)"
    assert declaration(".mv.gut .verdict", "color") == "var(--good)"
    assert declaration(".mv.autsch .verdict", "color") == "var(--bad)"
    assert declaration(".mv.blubb .verdict", "color") == "var(--blubb)"
    assert declaration(".sel-act.explore", "color") == "var(--sel-explore-ink)"
    assert declaration(".sel-act.mark", "color") == "var(--sel-mark-ink)"
    assert declaration("a", "color") == "var(--focus)"
    assert declaration(".btn.danger", "background") == "var(--danger)"
    for n in range(1, 9):
        assert declaration(f".cell.n{n}", "color") == f"var(--n{n})"


def test_never_opened_numbers_are_not_faded() -> None:
    """After the end, the numbers of never-opened cells (.ghost) keep their full contrast: told
    apart by other means than opacity."""
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css()):
        if any(s.strip().startswith(".cell.ghost") and "::" not in s for s in selectors.split(",")):
            opacity = re.search(r"(?:^|;)\s*opacity\s*:\s*([\d.]+)", body)
            assert opacity is None or float(opacity.group(1)) >= 1, (selectors.strip(), body.strip())
    assert declaration(".cell.ghost", "font-style") == "italic"


def test_the_odds_percentages_are_at_least_11_px() -> None:
    size = declaration(".cell .odds-p", "font-size")
    floor = re.fullmatch(r"max\([^,]+,\s*(\d+(?:\.\d+)?)px\)", size or "")
    assert floor is not None and float(floor.group(1)) >= 11, size
