"""Layout checks for the browser tests: what lies outside the window, what the page scrolls
sideways, on how many lines a text sits. Every check reads the page once (page.evaluate with a
function: the pages' CSP has no unsafe-eval, which Playwright's string predicates need)."""

from __future__ import annotations

from .conftest import Person

OUTSIDE = """(selector) => [...document.querySelectorAll(selector)].flatMap((e) => {
  const r = e.getBoundingClientRect();
  return r.left >= -0.5 && r.right <= window.innerWidth + 0.5 ? []
    : [`${e.id || e.className || e.tagName}: ${Math.round(r.left)}..${Math.round(r.right)} of ${window.innerWidth}`];
})"""

LINES = """(selector) => {
  const range = document.createRange();
  range.selectNodeContents(document.querySelector(selector));
  const tops = [...range.getClientRects()].filter((r) => r.width > 0).map((r) => r.top).sort((a, b) => a - b);
  return tops.filter((t, i) => i === 0 || t - tops[i - 1] > 4).length;
}"""

HEADER = "header.top a, header.top button"


def page_overflow(person: Person) -> int:
    """How far the page scrolls sideways (0: not at all)."""
    return person.page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


def outside(person: Person, selector: str) -> list[str]:
    """The elements matching ``selector`` that are not wholly inside the window's width."""
    return person.page.evaluate(OUTSIDE, selector)


def off_screen(person: Person, selectors: tuple[str, ...], size: tuple[int, int]) -> list[str]:
    """The selectors whose boxes are not wholly inside a window of ``size`` at scroll 0 (each
    with its box), after resizing the person's window to it; the page must not scroll sideways."""
    page = person.page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.evaluate("() => window.scrollTo(0, 0)")
    page.wait_for_timeout(50)  # one layout after the resize
    assert page.evaluate("() => window.scrollY") == 0
    assert page.evaluate("() => document.documentElement.scrollWidth") <= size[0]
    misses = []
    for selector in selectors:
        box = page.locator(selector).bounding_box()
        if box is None or not (box["x"] >= -0.5 and box["y"] >= -0.5 and box["x"] + box["width"] <= size[0] + 0.5
                               and box["y"] + box["height"] <= size[1] + 0.5):
            misses.append(f"{person.name} {size[0]}×{size[1]} {selector}: {box}")
    return misses


def header_misses(person: Person) -> list[str]:
    """The header's links and buttons (the language switch too) not wholly in the window, and
    the header's nav if it scrolls sideways (something in it hidden until scrolled to)."""
    page = person.page
    misses = outside(person, HEADER)
    if page.evaluate("() => { const n = document.querySelector('.top-nav'); return n.scrollWidth > n.clientWidth }"):
        misses.append("the header's nav scrolls sideways")
    return misses


def lines(person: Person, selector: str) -> int:
    """On how many lines the text of the (first) element matching ``selector`` is laid out."""
    return person.page.evaluate(LINES, selector)
