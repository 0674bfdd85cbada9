"""Exact Minesweeper deduction: safe cells, certain mines, auto-reveal, probabilities.

Pure and self-contained (stdlib only, no I/O). Cells are ``(r, c)`` tuples, ``r`` the row
``0..height-1`` and ``c`` the column ``0..width-1``.

A *consistent layout* places exactly ``total_mines - len(visible_mines)`` mines on the hidden
cells (cells that are neither a shown number nor a visible mine) so that every shown number
equals its count of neighbouring mines, visible ones included.  Everything below is exact over
the set of all consistent layouts, each weighted equally; see ``docs/ENGINE.md`` ("Deduction")
for the algorithm.  ``numbers`` maps cells to ints 0..8; ``visible_mines`` is read as a set.

>>> revealable(3, 1, 1, {(0, 0): 1}, [])       # the 1 sees only (0, 1): it is the mine
{(0, 2): 1}
>>> a = analyze(3, 1, 1, {(0, 0): 1}, [])
>>> sorted(a.mines), sorted(a.safe), a.layouts
([(0, 1)], [(0, 2)], 1)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, lru_cache
from math import comb
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .reveal_cache import RevealCache

__all__ = ["Analysis", "RevealCache", "analyze", "revealable"]

Cell = tuple[int, int]


# ---------------------------------------------------------------------------------------------
# Result type
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Analysis:
    """The exact analysis of a position.

    ``safe``/``mines``: hidden cells that hold no mine / a mine in every consistent layout.
    ``revealable``: the safe cells whose neighbour-mine count is the same in every consistent
    layout, mapped to that count (what the duel auto-reveals).
    ``layouts``: the number of consistent layouts (an exact int, often huge).
    ``probabilities``: for every hidden cell, the probability that it holds a mine, every
    consistent layout weighing the same, as a float (correctly rounded).
    ``mine_layouts`` (computed on first use): for every hidden cell, in how many consistent
    layouts it holds a mine.  ``exact_probabilities`` (likewise): ``mine_layouts[cell] /
    layouts`` as ``Fraction`` objects.
    """

    safe: frozenset[Cell]
    mines: frozenset[Cell]
    revealable: dict[Cell, int]
    layouts: int
    probabilities: dict[Cell, float] = field(repr=False)
    _mine_counts: tuple[list[Cell], list[int]] = field(repr=False, compare=False)

    @cached_property
    def mine_layouts(self) -> dict[Cell, int]:
        """For every hidden cell, the number of consistent layouts with a mine on it."""
        return dict(zip(*self._mine_counts))

    @cached_property
    def exact_probabilities(self) -> dict[Cell, Fraction]:
        """Exact mine probability of every hidden cell."""
        total = self.layouts
        return {cell: Fraction(n, total) for cell, n in zip(*self._mine_counts)}


# ---------------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------------


def revealable(
    width: int,
    height: int,
    total_mines: int,
    numbers: Mapping[Cell, int],
    visible_mines: Iterable[Cell],
    cache: RevealCache | None = None,
) -> dict[Cell, int]:
    """Hidden cells that are safe and whose number is the same in every consistent layout.

    Maps each such cell to its number (neighbouring mines, visible ones included).  Hidden
    certain mines are never included.  Raises ``ValueError`` on inconsistent input.  Cheaper
    than ``analyze(...).revealable`` (no per-cell probabilities), same answer.

    With ``cache`` (an :class:`engine.reveal_cache.RevealCache`, one per game), the same
    answer is worked out from the positions solved before with that cache, re-solving only
    what changed since the nearest of them; without, from scratch.

    A revealed 0 does not flood: the duel start position reveals nothing more.

    >>> revealable(11, 11, 15, {(5, 5): 0}, [])
    {}

    (1, 1) is safe (it touches a 0) and sees both cells where the 1 at (0, 1) may have its
    mine, so it shows 1 whichever holds it:

    >>> revealable(3, 2, 1, {(0, 0): 0, (0, 1): 1, (1, 0): 0}, [])
    {(1, 1): 1}
    """
    if cache is not None:
        return cache.revealable(width, height, total_mines, numbers, visible_mines)
    return _solve(width, height, total_mines, numbers, visible_mines, False)[0]


def analyze(
    width: int,
    height: int,
    total_mines: int,
    numbers: Mapping[Cell, int],
    visible_mines: Iterable[Cell],
    known_safe: Iterable[Cell] = (),
) -> Analysis:
    """Exact analysis of a position; see :class:`Analysis`.  Raises ``ValueError`` on
    inconsistent input (no consistent layout, cells off the board, a cell both a number and
    a visible mine, bad counts).

    ``known_safe``: hidden cells the analysing player knows hold no mine although nothing
    public shows it (in a duel, the player's own wrong marks).  Only the consistent layouts
    that leave them empty count; they stay hidden cells (probability 0, in ``safe``, and in
    ``revealable`` when their number is the same in every such layout).  A known-safe cell
    that shows a number is safe anyway and is ignored; one that is a visible mine raises
    ``ValueError``.

    >>> a = analyze(2, 2, 1, {(0, 0): 1}, [])
    >>> a.layouts, a.probabilities[(1, 1)], a.exact_probabilities[(0, 1)]
    (3, 0.3333333333333333, Fraction(1, 3))
    >>> analyze(2, 2, 1, {(0, 0): 1}, [], known_safe=[(1, 1)]).exact_probabilities[(0, 1)]
    Fraction(1, 2)
    """
    return _solve(width, height, total_mines, numbers, visible_mines, True, known_safe)[1]


def __getattr__(name: str):
    """``RevealCache`` (engine/reveal_cache.py, which builds on this module), imported on
    first use so that neither module needs the other while it loads."""
    if name == "RevealCache":
        from .reveal_cache import RevealCache

        globals()["RevealCache"] = RevealCache
        return RevealCache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------
# Geometry
# ---------------------------------------------------------------------------------------------


class _Geometry:
    """Per board size: cell <-> index ``r * width + c``, neighbour lists and bitmasks."""

    __slots__ = ("index", "cells", "nlists", "nmasks", "full", "offsets")

    def __init__(self, width: int, height: int) -> None:
        self.cells = tuple((r, c) for r in range(height) for c in range(width))
        self.index = {cell: i for i, cell in enumerate(self.cells)}
        self.nlists = tuple(
            tuple(
                rr * width + cc
                for rr in (r - 1, r, r + 1)
                for cc in (c - 1, c, c + 1)
                if (rr != r or cc != c) and 0 <= rr < height and 0 <= cc < width
            )
            for r, c in self.cells
        )
        self.nmasks = tuple(sum(1 << i for i in lst) for lst in self.nlists)
        self.full = (1 << (width * height)) - 1
        # offsets[p]: index offsets of the cells of a 3x3 window whose bits are set in the
        # 9-bit pattern p (bit 3 * row + column, window rows/columns 0..2).
        self.offsets = tuple(
            tuple((b // 3 - 1) * width + b % 3 - 1 for b in range(9) if p >> b & 1)
            for p in range(512)
        )


@lru_cache(maxsize=16)
def _geometry(width: int, height: int) -> _Geometry:
    return _Geometry(width, height)


def _bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending (quick when few bits are set)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _dense_bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending (quick when many bits are set)."""
    return [i for i, ch in enumerate(bin(mask)[:1:-1]) if ch == "1"]


# ---------------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------------


def _parse(geo, total_mines, numbers, visible_mines):
    """Check the input; return (number at index, visible-mine mask, mines left to place)."""
    index = geo.index
    num_at: dict[int, int] = {}
    for cell, value in numbers.items():
        i = index.get(cell) if cell.__class__ is tuple else None
        if i is None:
            raise ValueError(f"number at {cell!r}: not a cell of the board")
        if value.__class__ is not int or not 0 <= value <= 8:
            raise ValueError(f"bad number {value!r} at {cell!r}")
        num_at[i] = value
    vis_mask = 0
    for cell in visible_mines:
        i = index.get(cell) if cell.__class__ is tuple else None
        if i is None:
            raise ValueError(f"visible mine at {cell!r}: not a cell of the board")
        if i in num_at:
            raise ValueError(f"cell {cell!r} is both a number and a visible mine")
        vis_mask |= 1 << i
    if total_mines.__class__ is not int or total_mines < 0:
        raise ValueError(f"bad mine count {total_mines!r}")
    remaining = total_mines - vis_mask.bit_count()
    if remaining < 0 or remaining > len(geo.cells) - len(num_at) - vis_mask.bit_count():
        raise ValueError(f"{total_mines} mines do not fit this position")
    return num_at, vis_mask, remaining


# ---------------------------------------------------------------------------------------------
# Cheap certain rules
# ---------------------------------------------------------------------------------------------


def _simplify(cons):
    """Settle cells by the single-number rule, to a fixed point: a number that needs no more
    mines makes its unknown neighbours safe; one that needs as many as it has unknown
    neighbours makes them all mines.

    ``cons`` is a list of (mines needed, mask of unknown neighbours, number cell).  Returns the
    constraints left (none settled, duplicates merged) and the masks of the cells found safe
    and found to be mines.  Raises ``ValueError`` on a contradiction.  The rule only derives
    what holds in every consistent layout, so the exact count that follows never depends on
    it; it only makes the count cheaper.  (A pairwise subset rule was tried as well: on the
    bench positions it cost more than it saved, the exact count being cheap on small
    components.)
    """
    safe = 0
    mine = 0
    known = 0
    while True:
        changed = False
        nxt = []
        seen: dict[int, int] = {}
        for con in cons:
            need, mask, _ = con
            if mask & known:
                need -= (mask & mine).bit_count()
                mask &= ~known
                con = (need, mask, con[2])
            if need <= 0:
                if need:
                    raise ValueError("no consistent layout")
                if mask:
                    safe |= mask
                    known |= mask
                    changed = True
                continue
            size = mask.bit_count()
            if need >= size:
                if need > size:
                    raise ValueError("no consistent layout")
                mine |= mask
                known |= mask
                changed = True
                continue
            other = seen.get(mask)
            if other is None:
                seen[mask] = need
                nxt.append(con)
            elif other != need:
                raise ValueError("no consistent layout")
        cons = nxt
        if not changed:
            return cons, safe, mine


# ---------------------------------------------------------------------------------------------
# The solver
# ---------------------------------------------------------------------------------------------


def _known_safe_mask(geo, known_safe, number_mask, vis_mask):
    """The mask of the hidden cells of ``known_safe`` (numbers are safe anyway: left out)."""
    mask = 0
    for cell in known_safe:
        i = geo.index.get(cell) if cell.__class__ is tuple else None
        if i is None:
            raise ValueError(f"known safe cell {cell!r}: not a cell of the board")
        if vis_mask >> i & 1:
            raise ValueError(f"cell {cell!r} is both known safe and a visible mine")
        mask |= 1 << i
    return mask & ~number_mask


def _solve(width, height, total_mines, numbers, visible_mines, full, known_safe=()):
    if width.__class__ is not int or height.__class__ is not int or width <= 0 or height <= 0:
        raise ValueError(f"bad board size {width!r}x{height!r}")
    geo = _geometry(width, height)
    nmasks = geo.nmasks
    cells = geo.cells
    num_at, vis_mask, remaining = _parse(geo, total_mines, numbers, visible_mines)
    number_mask = 0
    for i in num_at:
        number_mask |= 1 << i
    hidden = geo.full ^ number_mask ^ vis_mask
    # Known-safe cells take part as hidden cells that no layout may fill: the constraints
    # never see them, and they join the cells the single-number rule settles as safe.
    known = _known_safe_mask(geo, known_safe, number_mask, vis_mask) if known_safe else 0

    # Constraints: (mines still needed, mask of hidden neighbours, number cell).
    cons = []
    open_cells = hidden & ~known
    for i, v in num_at.items():
        nm = nmasks[i]
        mask = nm & open_cells
        if vis_mask:
            v -= (nm & vis_mask).bit_count()
        if mask:
            cons.append((v, mask, i))
        elif v:
            raise ValueError(f"the number at {cells[i]} cannot be satisfied")
    cons, safe, mine = _simplify(cons)
    safe |= known

    remaining -= mine.bit_count()
    unknown = hidden & ~safe & ~mine
    n_unknown = unknown.bit_count()
    if remaining < 0 or remaining > n_unknown:
        raise ValueError("no consistent layout")

    # --- boxes: frontier cells touched by exactly the same constraints -----------------------
    sig_of: dict[int, int] = {}
    offsets = geo.offsets
    for ci, (_, mask, centre) in enumerate(cons):
        # The 3x3 window of mask around the number, as a 9-bit pattern.  Window cells that
        # wrap to another row at the board's edge are never in mask: they are not neighbours.
        base = centre - width - 1
        x = mask >> base if base >= 0 else mask << -base
        bit = 1 << ci
        for o in offsets[(x & 7) | (x >> width & 7) << 3 | (x >> (2 * width) & 7) << 6]:
            j = centre + o
            sig_of[j] = sig_of.get(j, 0) | bit
    by_sig: dict[int, list[int]] = {}
    for j, sig in sig_of.items():
        by_sig.setdefault(sig, []).append(j)
    box_sig = list(by_sig)
    box_cells = list(by_sig.values())
    nbox = len(box_cells)
    n_int = n_unknown - len(sig_of)
    sizes = [len(bc) for bc in box_cells] + [n_int]  # the interior is "box" nbox

    # --- independent components, each counted by mine number --------------------------------
    comps = [_Component(cis, bs, cons, box_sig, sizes) for cis, bs in _components(len(cons), box_sig)]

    # --- combine components and the interior by total mine count -----------------------------
    # Components with a single possible mine count only scale the count and shift the total.
    fixed_w = 1
    rest_total = remaining
    variable = []
    for comp in comps:
        if comp.single is None:
            variable.append(comp)
        else:
            fixed_w *= comp.poly[comp.single]
            rest_total -= comp.single
    if rest_total < 0:
        raise ValueError("no consistent layout")
    # pdeg[k]: the most mines variable components before k can hold.
    pdeg = [0]
    for comp in variable:
        pdeg.append(pdeg[-1] + len(comp.poly) - 1)
    # scan[k][t]: layouts of variable components k.. and of the interior that hold the rest of
    # the mines when the components before k hold t.
    scan = [[]] * len(variable) + [
        [comb(n_int, rest_total - t) if 0 <= rest_total - t <= n_int else 0 for t in range(pdeg[-1] + 1)]
    ]
    for k in range(len(variable) - 1, -1, -1):
        after = scan[k + 1]
        terms = [(m, w) for m, w in enumerate(variable[k].poly) if w]
        scan[k] = [sum(w * after[t + m] for m, w in terms) for t in range(pdeg[k] + 1)]
    total = scan[0][0] * fixed_w
    if total == 0:
        raise ValueError("no consistent layout")

    # rest[m] for a component: layouts of everything outside it when it holds m mines.
    prefix = [1]  # product of the polynomials of the variable components so far
    for k, comp in enumerate(variable):
        after = scan[k + 1]
        terms = [(i, a) for i, a in enumerate(prefix) if a]
        comp.rest = [fixed_w * sum(a * after[m + i] for i, a in terms) for m in range(len(comp.poly))]
        prefix = _polymul(prefix, comp.poly)
    for comp in comps:
        if comp.single is not None:
            comp.rest = [0] * len(comp.poly)
            comp.rest[comp.single] = total // comp.poly[comp.single]

    # The interior: prefix is now the product of the variable components' polynomials.
    int_mine = 0  # layouts with a mine on one given interior cell
    int_kset = 0  # bit r set iff the interior holds r mines in some consistent layout
    for t, w in enumerate(prefix):
        r = rest_total - t
        if w and 0 <= r <= n_int:
            int_kset |= 1 << r
            if r:
                int_mine += w * comb(n_int - 1, r - 1)
    int_mine *= fixed_w

    box_count = [0] * nbox  # layouts with a mine on one given cell of the box
    box_kset = [0] * nbox + [int_kset]  # bit k set iff box holds k mines in some layout
    for comp in comps:
        for b, num, kset in comp.marginals():
            box_count[b] = num // sizes[b]
            box_kset[b] = kset

    # --- safe cells, certain mines, determined numbers ---------------------------------------
    safe_all = safe
    mine_all = mine
    for b in range(nbox):
        kset = box_kset[b]
        if kset == 1:
            for j in box_cells[b]:
                safe_all |= 1 << j
        elif kset == 1 << sizes[b]:
            for j in box_cells[b]:
                mine_all |= 1 << j
    interior = 0
    if n_int:
        frontier = 0
        for _, mask, _ in cons:
            frontier |= mask
        interior = unknown & ~frontier
        if int_kset == 1:
            safe_all |= interior
        elif int_kset == 1 << n_int:
            mine_all |= interior

    box_of = {j: b for b, bc in enumerate(box_cells) for j in bc}
    fixed_mines = vis_mask | mine
    reveal: dict[Cell, int] = {}
    for x in _bits(safe_all):
        around = nmasks[x]
        count = (around & fixed_mines).bit_count()
        around &= unknown
        if not around:  # every neighbour settled: the number is fixed
            reveal[cells[x]] = count
            continue
        seen_in: dict[int, int] = {}  # box -> how many of its cells x sees
        while around:
            low = around & -around
            b = box_of.get(low.bit_length() - 1, nbox)
            seen_in[b] = seen_in.get(b, 0) + 1
            around ^= low
        varying = []
        for b, w in seen_in.items():
            kset = box_kset[b]
            s = sizes[b]
            if w < s and kset & ((1 << s) - 2):
                # x sees part of a box that sometimes holds some but not all of its cells'
                # mines: moving one across the border changes x's number.
                break
            if kset & (kset - 1):
                varying.append((b, w))
            else:
                count += (kset.bit_length() - 1) * w // s
        else:
            if not varying:
                reveal[cells[x]] = count
            elif len(varying) > 1:
                extra = _varying_count(varying, sizes, comps, remaining, n_int, nbox)
                if extra is not None:
                    reveal[cells[x]] = count + extra

    if not full:
        return reveal, None

    # Every hidden cell: in how many layouts it holds a mine, and that over the layouts.
    keys = _bits(safe)
    counts = [0] * len(keys)
    probs = [0.0] * len(keys)
    mine_idx = _bits(mine)
    keys += mine_idx
    counts += [total] * len(mine_idx)
    probs += [1.0] * len(mine_idx)
    for b, bc in enumerate(box_cells):
        keys += bc
        counts += [box_count[b]] * len(bc)
        probs += [box_count[b] / total] * len(bc)
    if n_int:
        keys += _dense_bits(interior)
        counts += [int_mine] * n_int
        probs += [int_mine / total] * n_int
    keys = [cells[j] for j in keys]

    analysis = Analysis(
        safe=frozenset([cells[j] for j in _dense_bits(safe_all)]),
        mines=frozenset([cells[j] for j in _bits(mine_all)]),
        revealable=reveal,
        layouts=total,
        probabilities=dict(zip(keys, probs)),
        _mine_counts=(keys, counts),
    )
    return reveal, analysis


def _polymul(p: list[int], q: list[int]) -> list[int]:
    out = [0] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        if a:
            for j, b in enumerate(q):
                if b:
                    out[i + j] += a * b
    return out


def _merge(table: dict, key: int, off: int, packed: int, slot: int) -> None:
    """Add a packed polynomial ``x**off * packed`` into ``table[key]`` (an (offset, packed)
    pair).  Offsets keep the packed ints short: they start at the fewest mines possible."""
    old = table.get(key)
    if old is None:
        table[key] = (off, packed)
        return
    o, p = old
    if o == off:
        table[key] = (o, p + packed)
    elif o < off:
        table[key] = (o, p + (packed << ((off - o) * slot)))
    else:
        table[key] = (off, packed + (p << ((o - off) * slot)))


def _unpack(value: int, slot: int) -> list[int]:
    """Coefficients of a polynomial packed into one int, ``slot`` bits (whole bytes) per
    coefficient."""
    step = slot // 8
    raw = value.to_bytes((value.bit_length() + 7) // 8, "little")
    return [int.from_bytes(raw[j : j + step], "little") for j in range(0, len(raw), step)]


_COMB = [[comb(n, k) for k in range(n + 1)] for n in range(9)]


def _components(ncons, box_sig):
    """Split the frontier into independent components: [(constraints, boxes)], each in a
    processing order that lets constraints open and close quickly: breadth-first over
    constraints linked by shared boxes, from a constraint found last by a first sweep (an end
    of the component, Cuthill-McKee style); boxes in the order their first constraint comes."""
    cons_boxes: list[list[int]] = [[] for _ in range(ncons)]
    adj: list[set[int]] = [set() for _ in range(ncons)]
    for b, sig in enumerate(box_sig):
        cs = _bits(sig)
        for c in cs:
            cons_boxes[c].append(b)
        if len(cs) > 1:
            for c in cs:
                adj[c].update(cs)

    def sweep(start):
        order = [start]
        seen.add(start)
        for c in order:
            for d in adj[c]:
                if d not in seen:
                    seen.add(d)
                    order.append(d)
        return order

    out = []
    done: set[int] = set()
    for c0 in range(ncons):
        if c0 in done:
            continue
        if not adj[c0]:
            done.add(c0)
            out.append(([c0], cons_boxes[c0]))
            continue
        seen: set[int] = set()
        first = sweep(c0)
        done.update(first)
        seen = set()
        order = sweep(first[-1])
        placed: set[int] = set()
        boxes = []
        for c in order:
            for b in cons_boxes[c]:
                if b not in placed:
                    placed.add(b)
                    boxes.append(b)
        out.append((order, boxes))
    return out


class _Component:
    """One independent part of the frontier: constraints linked through shared boxes.

    Boxes are assigned mine counts one at a time in ``order``.  A state is what every
    constraint still needs, packed 4 bits per constraint into one int; the states after each
    box map to the layout counts of the boxes so far as a polynomial in their mine count:
    ``(offset, packed)`` for ``x**offset * packed(x)``, ``slot`` bits (whole bytes) per
    coefficient packed into one int (no coefficient can overflow: each is at most the number
    of layouts of the component's cells, < 2**slot).
    """

    __slots__ = ("order", "sizes", "needs0", "layers", "trans", "slot", "poly", "single", "rest")

    def __init__(self, cis, boxes, cons, box_sig, sizes):
        self.order = order = boxes
        self.sizes = sizes
        if len(boxes) == 1:  # a lone number: need n of its s unknown cells, C(s, n) ways
            need = cons[cis[0]][0]
            self.poly = [0] * need + [_COMB[sizes[boxes[0]]][need]]
            self.single = need
            self.layers = None
            return
        local = {c: k for k, c in enumerate(cis)}
        needs0 = 0
        for c in cis:
            needs0 |= cons[c][0] << (4 * local[c])
        self.needs0 = needs0
        cap = [0] * len(cis)
        bcons = {}
        for b in boxes:
            cs = [local[c] for c in _bits(box_sig[b])]
            bcons[b] = cs
            for c in cs:
                cap[c] += sizes[b]
        # bits per packed coefficient: more than the component's cells, in whole bytes
        self.slot = slot = (sum(sizes[b] for b in boxes) // 8 + 1) * 8
        cur = {needs0: (0, 1)}
        layers = [cur]
        trans = []
        for b in order:
            s = sizes[b]
            cs = bcons[b]
            for c in cs:
                cap[c] -= s
            checks = [(4 * c, cap[c]) for c in cs]
            delta = sum(1 << (4 * c) for c in cs)
            combs = _COMB[s]
            nxt: dict[int, tuple[int, int]] = {}
            tr: dict[int, list[tuple[int, int]]] = {}
            for key, (off, poly) in cur.items():
                kmin = 0
                kmax = s
                for sh, cp in checks:
                    v = key >> sh & 15
                    if v < kmax:
                        kmax = v
                    v -= cp
                    if v > kmin:
                        kmin = v
                moves = []
                for k in range(kmin, kmax + 1):
                    nk = key - k * delta
                    moves.append((k, nk))
                    _merge(nxt, nk, off + k, poly * combs[k], slot)
                tr[key] = moves
            trans.append(tr)
            layers.append(nxt)
            cur = nxt
        if 0 not in cur:
            raise ValueError("no consistent layout")
        self.layers = layers
        self.trans = trans
        off, packed = cur[0]
        self.poly = poly = [0] * off + _unpack(packed, slot)
        nz = [m for m, w in enumerate(poly) if w]
        self.single = nz[0] if len(nz) == 1 else None

    def marginals(self):
        """Backward pass: for each box, (box, layouts x mines summed over the box's cells,
        bitmask of the box's possible mine counts), the rest of the board weighted by
        ``self.rest[m]`` (layouts outside the component when it holds ``m`` mines)."""
        rest = self.rest
        if self.layers is None:
            need = self.single
            return [(self.order[0], self.poly[need] * rest[need] * need, 1 << need)]
        slot = self.slot
        step = slot // 8
        from_bytes = int.from_bytes
        nrest = len(rest)
        out = []
        back = {0: (0, 1)}  # state -> layouts of the boxes after it, by their mines
        for i in range(len(self.order) - 1, -1, -1):
            b = self.order[i]
            combs = _COMB[self.sizes[b]]
            fwd = self.layers[i]
            nb: dict[int, tuple[int, int]] = {}
            q: dict[int, tuple[int, int]] = {}  # k -> layouts with k mines here, by the rest
            for key, moves in self.trans[i].items():
                foff, fpoly = fwd[key]
                for k, nk in moves:
                    bv = back.get(nk)
                    if bv is None:
                        continue
                    boff, bpoly = bv
                    t = bpoly * combs[k]
                    _merge(nb, key, boff + k, t, slot)
                    _merge(q, k, foff + boff, fpoly * t, slot)
            back = nb
            num = 0
            kset = 0
            for k, (off, v) in q.items():
                # v packs, by the mines m' = off + j on the other boxes of the component, the
                # layouts with k mines here; weigh each by the layouts outside.
                raw = v.to_bytes((v.bit_length() + 7) // 8, "little")
                w = 0
                m = off + k
                for j in range(0, len(raw), step):
                    if m >= nrest:
                        break
                    c = from_bytes(raw[j : j + step], "little")
                    if c:
                        w += c * rest[m]
                    m += 1
                if w:
                    kset |= 1 << k
                    num += w * k
            out.append((b, num, kset))
        return out

    def minmax(self, contrib):
        """Per mine count m of the component: (min, max) over its layouts of the sum of
        ``contrib[b][k]`` (boxes not in ``contrib`` add nothing)."""
        if self.layers is None:
            need = self.single
            cb = contrib.get(self.order[0])
            d = cb[need] if cb is not None else 0
            return {need: (d, d)}
        states = {(self.needs0, 0): (0, 0)}
        for i, b in enumerate(self.order):
            cb = contrib.get(b)
            tr = self.trans[i]
            new: dict = {}
            for (key, m), (lo, hi) in states.items():
                for k, nk in tr[key]:
                    d = cb[k] if cb is not None else 0
                    nkey = (nk, m + k)
                    old = new.get(nkey)
                    if old is None:
                        new[nkey] = (lo + d, hi + d)
                    else:
                        new[nkey] = (min(old[0], lo + d), max(old[1], hi + d))
            states = new
        return {m: v for (key, m), v in states.items() if key == 0}


def _varying_count(varying, sizes, comps, remaining, n_int, nbox):
    """The neighbour-mine count that ``varying`` boxes (list of (box, cells seen)) add for a
    safe cell, if it is the same in every consistent layout, else ``None``."""
    contrib: dict[int, list[int]] = {}
    int_f = None
    for b, w in varying:
        s = sizes[b]
        if w == s:
            row = list(range(s + 1))
        else:  # seen in part: only 0 or s mines occur in consistent layouts
            row = [0] * (s + 1)
            row[s] = w
        if b == nbox:
            int_f = row
        else:
            contrib[b] = row
    acc = {0: (0, 0)}
    for comp in comps:
        if not contrib.keys().isdisjoint(comp.order):
            part = comp.minmax(contrib)
        else:
            part = {m: (0, 0) for m, w in enumerate(comp.poly) if w}
        nxt: dict[int, tuple[int, int]] = {}
        for m1, (a1, b1) in acc.items():
            for m2, (a2, b2) in part.items():
                m = m1 + m2
                old = nxt.get(m)
                if old is None:
                    nxt[m] = (a1 + a2, b1 + b2)
                else:
                    nxt[m] = (min(old[0], a1 + a2), max(old[1], b1 + b2))
        acc = nxt
    lo = hi = None
    for m, (a, b) in acc.items():
        r = remaining - m
        if not 0 <= r <= n_int:
            continue
        f = int_f[r] if int_f is not None else 0
        lo = a + f if lo is None else min(lo, a + f)
        hi = b + f if hi is None else max(hi, b + f)
    if lo is None or lo != hi:
        return None
    return lo
