"""Exact Minesweeper deduction: safe cells, certain mines, auto-reveal, probabilities.

Pure and self-contained (stdlib only, no I/O). Cells are ``(r, c)`` tuples, ``r`` the row
``0..height-1`` and ``c`` the column ``0..width-1``.

A *consistent layout* places exactly ``total_mines - len(visible_mines)`` mines on the hidden
cells (cells that are neither a shown number nor a visible mine) so that every shown number
equals its count of neighbouring mines, visible ones included.  Everything below is exact over
the set of all consistent layouts, each weighted equally; see ``docs/ENGINE.md`` ("Deduction").

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

__all__ = ["Analysis", "analyze", "revealable"]

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
    ``mine_layouts``: for every hidden cell, in how many consistent layouts it holds a mine.
    ``probabilities``: for every hidden cell, ``mine_layouts[cell] / layouts`` as a float
    (correctly rounded); ``exact_probabilities`` gives the same as ``Fraction`` objects.
    """

    safe: frozenset[Cell]
    mines: frozenset[Cell]
    revealable: dict[Cell, int]
    layouts: int
    mine_layouts: dict[Cell, int] = field(repr=False)
    probabilities: dict[Cell, float] = field(repr=False)

    @cached_property
    def exact_probabilities(self) -> dict[Cell, Fraction]:
        """Exact mine probability of every hidden cell."""
        total = self.layouts
        return {cell: Fraction(n, total) for cell, n in self.mine_layouts.items()}


# ---------------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------------


def revealable(
    width: int,
    height: int,
    total_mines: int,
    numbers: Mapping[Cell, int],
    visible_mines: Iterable[Cell],
) -> dict[Cell, int]:
    """Hidden cells that are safe and whose number is the same in every consistent layout.

    Maps each such cell to its number (neighbouring mines, visible ones included).  Hidden
    certain mines are never included.  Raises ``ValueError`` on inconsistent input.

    A revealed 0 does not flood: the duel start position reveals nothing more.

    >>> revealable(11, 11, 15, {(5, 5): 0}, [])
    {}
    >>> revealable(3, 3, 1, {(1, 1): 1, (0, 0): 0, (0, 1): 0, (0, 2): 0}, [])
    {}
    """
    return _solve(width, height, total_mines, numbers, visible_mines, False)[0]


def analyze(
    width: int,
    height: int,
    total_mines: int,
    numbers: Mapping[Cell, int],
    visible_mines: Iterable[Cell],
) -> Analysis:
    """Exact analysis of a position; see :class:`Analysis`.  Raises ``ValueError`` on
    inconsistent input (no consistent layout, cells off the board, a cell both a number and
    a visible mine, bad counts).

    >>> a = analyze(2, 2, 1, {(0, 0): 1}, [])
    >>> a.layouts, a.probabilities[(1, 1)], a.exact_probabilities[(0, 1)]
    (3, 0.3333333333333333, Fraction(1, 3))
    """
    return _solve(width, height, total_mines, numbers, visible_mines, True)[1]


# ---------------------------------------------------------------------------------------------
# Geometry
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=16)
def _geometry(width: int, height: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """Neighbour index lists and neighbour bitmasks for every cell index ``r * width + c``."""
    lists = []
    masks = []
    for r in range(height):
        for c in range(width):
            lst = tuple(
                rr * width + cc
                for rr in (r - 1, r, r + 1)
                for cc in (c - 1, c, c + 1)
                if (rr != r or cc != c) and 0 <= rr < height and 0 <= cc < width
            )
            lists.append(lst)
            m = 0
            for i in lst:
                m |= 1 << i
            masks.append(m)
    return tuple(lists), tuple(masks)


def _bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


# ---------------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------------


def _index(cell: object, width: int, height: int) -> int:
    try:
        r, c = cell  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError(f"not a cell: {cell!r}") from None
    if not (isinstance(r, int) and isinstance(c, int)) or isinstance(r, bool) or isinstance(c, bool):
        raise ValueError(f"not a cell: {cell!r}")
    if not (0 <= r < height and 0 <= c < width):
        raise ValueError(f"cell {cell!r} is off the {width}x{height} board")
    return r * width + c


# ---------------------------------------------------------------------------------------------
# The solver
# ---------------------------------------------------------------------------------------------


def _solve(width, height, total_mines, numbers, visible_mines, full):
    if not (isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0):
        raise ValueError(f"bad board size {width!r}x{height!r}")
    if not isinstance(total_mines, int) or total_mines < 0:
        raise ValueError(f"bad mine count {total_mines!r}")
    ncells = width * height
    nlists, nmasks = _geometry(width, height)

    num_at: dict[int, int] = {}
    number_mask = 0
    for cell, value in numbers.items():
        i = _index(cell, width, height)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 8:
            raise ValueError(f"bad number {value!r} at {cell!r}")
        num_at[i] = value
        number_mask |= 1 << i
    vis_mask = 0
    for cell in visible_mines:
        i = _index(cell, width, height)
        if number_mask >> i & 1:
            raise ValueError(f"cell {cell!r} is both a number and a visible mine")
        vis_mask |= 1 << i
    remaining = total_mines - vis_mask.bit_count()
    hidden = ((1 << ncells) - 1) & ~number_mask & ~vis_mask
    if remaining < 0 or remaining > hidden.bit_count():
        raise ValueError(f"{total_mines} mines do not fit this position")

    # Constraints: (mines still needed, mask of hidden neighbours).
    cons = []
    for i, value in num_at.items():
        need = value - (nmasks[i] & vis_mask).bit_count()
        cons.append((need, nmasks[i] & hidden))

    # --- cheap, certain rules --------------------------------------------------------------
    safe = 0
    mine = 0
    while True:
        changed = False
        nxt = []
        seen: dict[int, int] = {}
        for need, mask in cons:
            known = safe | mine
            if mask & known:
                need -= (mask & mine).bit_count()
                mask &= ~known
            size = mask.bit_count()
            if need < 0 or need > size:
                raise ValueError("no consistent layout")
            if not mask:
                continue
            if need == 0:
                safe |= mask
                changed = True
            elif need == size:
                mine |= mask
                changed = True
            else:
                other = seen.get(mask)
                if other is None:
                    seen[mask] = need
                    nxt.append((need, mask))
                elif other != need:
                    raise ValueError("no consistent layout")
        cons = nxt
        if safe & mine:
            raise ValueError("no consistent layout")
        if changed:
            continue
        # pairwise subset rule
        n = len(cons)
        for a in range(n):
            na, ma = cons[a]
            for b in range(n):
                if a == b:
                    continue
                nb, mb = cons[b]
                if ma & ~mb or not ma & mb:
                    continue
                d = mb & ~ma
                dn = nb - na
                dc = d.bit_count()
                if dn < 0 or dn > dc:
                    raise ValueError("no consistent layout")
                if dn == 0:
                    safe |= d
                    changed = True
                elif dn == dc:
                    mine |= d
                    changed = True
        if safe & mine:
            raise ValueError("no consistent layout")
        if not changed:
            break

    remaining -= mine.bit_count()
    unknown = hidden & ~safe & ~mine
    if remaining < 0 or remaining > unknown.bit_count():
        raise ValueError("no consistent layout")

    frontier = 0
    for _, mask in cons:
        frontier |= mask
    interior = unknown & ~frontier
    n_int = interior.bit_count()

    # --- boxes and components ----------------------------------------------------------------
    sig_of: dict[int, int] = {}
    for ci, (_, mask) in enumerate(cons):
        for i in _bits(mask):
            sig_of[i] = sig_of.get(i, 0) | (1 << ci)
    box_index: dict[int, int] = {}
    box_cells: list[list[int]] = []
    box_sig: list[int] = []
    box_of: dict[int, int] = {}
    for i in sorted(sig_of):
        sig = sig_of[i]
        b = box_index.get(sig)
        if b is None:
            b = box_index[sig] = len(box_cells)
            box_cells.append([])
            box_sig.append(sig)
        box_cells[b].append(i)
        box_of[i] = b
    nbox = len(box_cells)

    parent = list(range(len(cons)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for sig in box_sig:
        cs = _bits(sig)
        r0 = find(cs[0])
        for c in cs[1:]:
            rc = find(c)
            if rc != r0:
                parent[rc] = r0
    comp_cons: dict[int, list[int]] = {}
    for ci in range(len(cons)):
        comp_cons.setdefault(find(ci), []).append(ci)
    comp_boxes: dict[int, list[int]] = {}
    for b, sig in enumerate(box_sig):
        comp_boxes.setdefault(find(_bits(sig)[0]), []).append(b)

    comps = []  # (list of global box ids, result dict m -> (w, tallies, kmasks))
    for root, cis in comp_cons.items():
        boxes = comp_boxes[root]
        comps.append((boxes, _component_dp(boxes, cis, cons, box_cells, box_sig)))

    # --- global combination ------------------------------------------------------------------
    polys = [{m: v[0] for m, v in res.items()} for _, res in comps]
    ncomp = len(comps)
    prefix = [{0: 1}]
    for p in polys:
        prefix.append(_polymul(prefix[-1], p, remaining))
    suffix = [{0: 1}] * (ncomp + 1)
    for k in range(ncomp - 1, -1, -1):
        suffix[k] = _polymul(suffix[k + 1], polys[k], remaining)
    whole = prefix[-1]
    total = 0
    int_mine = 0
    int_kset = 0
    for mm, w in whole.items():
        r = remaining - mm
        if 0 <= r <= n_int:
            total += w * comb(n_int, r)
            if r:
                int_mine += w * comb(n_int - 1, r - 1)
            int_kset |= 1 << r
    if total == 0:
        raise ValueError("no consistent layout")

    box_count = [0] * nbox  # layouts with a mine on one given cell of the box
    box_kset = [0] * nbox  # bit k set iff the box holds k mines in some consistent layout
    for k, (boxes, res) in enumerate(comps):
        rest_poly = _polymul(prefix[k], suffix[k + 1], remaining)
        for mm, (w, tal, kms) in res.items():
            rest = 0
            for j, q in rest_poly.items():
                r = remaining - mm - j
                if 0 <= r <= n_int:
                    rest += q * comb(n_int, r)
            if not rest:
                continue
            for pos, b in enumerate(boxes):
                box_count[b] += tal[pos] * rest
                box_kset[b] |= kms[pos]
    for b in range(nbox):
        box_count[b] //= len(box_cells[b])

    # --- safe cells, mines, revealable ------------------------------------------------------
    safe_all = safe
    mine_all = mine
    for b in range(nbox):
        if box_kset[b] == 1:
            for i in box_cells[b]:
                safe_all |= 1 << i
        elif box_kset[b] == 1 << len(box_cells[b]):
            for i in box_cells[b]:
                mine_all |= 1 << i
    if n_int:
        if int_kset == 1:
            safe_all |= interior
        elif int_kset == 1 << n_int:
            mine_all |= interior

    # interior is treated as one more box, index nbox
    sizes = [len(c) for c in box_cells] + [n_int]
    kset_all = box_kset + [int_kset]
    fixed_mines = vis_mask | mine
    reveal: dict[Cell, int] = {}
    ctx = None
    for x in _bits(safe_all):
        count = (nmasks[x] & fixed_mines).bit_count()
        touch: dict[int, int] = {}
        for y in nlists[x]:
            if unknown >> y & 1:
                b = box_of.get(y, nbox)
                touch[b] = touch.get(b, 0) + 1
        variable = []
        ok = True
        for b, w in touch.items():
            ks = kset_all[b]
            s = sizes[b]
            if w < s and ks & ((1 << s) - 2):
                ok = False
                break
            if ks & (ks - 1):
                variable.append((b, w))
            else:
                count += (ks.bit_length() - 1) * w // s
        if not ok:
            continue
        if not variable:
            reveal[(x // width, x % width)] = count
            continue
        if len(variable) == 1:
            continue
        if ctx is None:
            ctx = (comps, cons, box_cells, box_sig, polys, n_int, remaining, nbox)
        extra = _variable_count(ctx, variable, sizes)
        if extra is not None:
            reveal[(x // width, x % width)] = count + extra

    if not full:
        return reveal, None

    mine_layouts: dict[Cell, int] = {}
    probs: dict[Cell, float] = {}
    for i in _bits(safe):
        cell = (i // width, i % width)
        mine_layouts[cell] = 0
        probs[cell] = 0.0
    for i in _bits(mine):
        cell = (i // width, i % width)
        mine_layouts[cell] = total
        probs[cell] = 1.0
    for b in range(nbox):
        cnt = box_count[b]
        p = cnt / total
        for i in box_cells[b]:
            cell = (i // width, i % width)
            mine_layouts[cell] = cnt
            probs[cell] = p
    if n_int:
        p = int_mine / total
        for i in _bits(interior):
            cell = (i // width, i % width)
            mine_layouts[cell] = int_mine
            probs[cell] = p

    def cells(mask):
        return frozenset((i // width, i % width) for i in _bits(mask))

    analysis = Analysis(
        safe=cells(safe_all),
        mines=cells(mine_all),
        revealable=reveal,
        layouts=total,
        mine_layouts=mine_layouts,
        probabilities=probs,
    )
    return reveal, analysis


def _polymul(p: dict[int, int], q: dict[int, int], limit: int) -> dict[int, int]:
    out: dict[int, int] = {}
    for i, a in p.items():
        for j, b in q.items():
            k = i + j
            if k <= limit:
                out[k] = out.get(k, 0) + a * b
    return out


def _box_order(boxes, cis, box_sig):
    """Order a component's boxes so that constraints open and close quickly (BFS over
    constraints from a peripheral one, Cuthill-McKee style)."""
    adj: dict[int, set[int]] = {c: set() for c in cis}
    cons_boxes: dict[int, list[int]] = {c: [] for c in cis}
    for b in boxes:
        cs = _bits(box_sig[b])
        for c in cs:
            cons_boxes[c].append(b)
            adj[c].update(cs)

    def bfs(start):
        order = [start]
        seen = {start}
        for c in order:
            for d in sorted(adj[c]):
                if d not in seen:
                    seen.add(d)
                    order.append(d)
        return order

    start = bfs(min(cis))[-1]
    start = bfs(start)[-1]
    order = []
    placed = set()
    for c in bfs(start):
        for b in cons_boxes[c]:
            if b not in placed:
                placed.add(b)
                order.append(b)
    return order


def _component_dp(boxes, cis, cons, box_cells, box_sig):
    """Count the solutions of one component.

    Returns ``{m: (weight, tallies, kmasks)}`` over the component's mine count ``m``: the
    number of layouts of the component's cells with ``m`` mines; per box (in ``boxes`` order)
    the sum over those layouts of the box's mine count; per box the bitmask of mine counts the
    box takes in them.
    """
    local = {c: k for k, c in enumerate(cis)}
    pos_of = {b: k for k, b in enumerate(boxes)}
    nb = len(boxes)
    cap = [0] * len(cis)
    bcons = {}
    for b in boxes:
        cs = [local[c] for c in _bits(box_sig[b])]
        bcons[b] = cs
        for c in cs:
            cap[c] += len(box_cells[b])
    needs0 = tuple(cons[c][0] for c in cis)
    states = {(needs0, 0): (1, [0] * nb, [0] * nb)}
    for b in _box_order(boxes, cis, box_sig):
        s = len(box_cells[b])
        cs = bcons[b]
        for c in cs:
            cap[c] -= s
        p = pos_of[b]
        new: dict = {}
        for (needs, m), (w, tal, kms) in states.items():
            kmin = 0
            kmax = s
            for c in cs:
                v = needs[c]
                if v < kmax:
                    kmax = v
                v -= cap[c]
                if v > kmin:
                    kmin = v
            for k in range(kmin, kmax + 1):
                nl = list(needs)
                for c in cs:
                    nl[c] -= k
                key = (tuple(nl), m + k)
                f = comb(s, k)
                wf = w * f
                t2 = [t * f for t in tal]
                t2[p] = wf * k
                k2 = list(kms)
                k2[p] = 1 << k
                old = new.get(key)
                if old is None:
                    new[key] = (wf, t2, k2)
                else:
                    ow, ot, ok = old
                    new[key] = (
                        ow + wf,
                        [a + c for a, c in zip(ot, t2)],
                        [a | c for a, c in zip(ok, k2)],
                    )
        states = new
    return {m: v for (_, m), v in states.items()}


def _component_minmax(boxes, cis, cons, box_cells, box_sig, contrib):
    """Per component mine count ``m``: (min, max) over the component's solutions of
    ``sum(contrib[b][k])`` (``contrib`` maps some boxes to a list indexed by ``k``)."""
    local = {c: k for k, c in enumerate(cis)}
    cap = [0] * len(cis)
    bcons = {}
    for b in boxes:
        cs = [local[c] for c in _bits(box_sig[b])]
        bcons[b] = cs
        for c in cs:
            cap[c] += len(box_cells[b])
    needs0 = tuple(cons[c][0] for c in cis)
    states = {(needs0, 0): (0, 0)}
    for b in _box_order(boxes, cis, box_sig):
        s = len(box_cells[b])
        cs = bcons[b]
        for c in cs:
            cap[c] -= s
        cb = contrib.get(b)
        new: dict = {}
        for (needs, m), (lo, hi) in states.items():
            kmin = 0
            kmax = s
            for c in cs:
                v = needs[c]
                if v < kmax:
                    kmax = v
                v -= cap[c]
                if v > kmin:
                    kmin = v
            for k in range(kmin, kmax + 1):
                nl = list(needs)
                for c in cs:
                    nl[c] -= k
                key = (tuple(nl), m + k)
                d = cb[k] if cb is not None else 0
                old = new.get(key)
                if old is None:
                    new[key] = (lo + d, hi + d)
                else:
                    new[key] = (min(old[0], lo + d), max(old[1], hi + d))
        states = new
    return {m: v for (_, m), v in states.items()}


def _variable_count(ctx, variable, sizes):
    """The neighbour-mine count contributed by ``variable`` boxes (list of (box, cells
    touched)) if it is the same in every consistent layout, else ``None``."""
    comps, cons, box_cells, box_sig, polys, n_int, remaining, nbox = ctx
    contrib: dict[int, list[int]] = {}
    int_f = None
    for b, w in variable:
        s = sizes[b]
        if w == s:
            row = list(range(s + 1))
        else:  # partial: only 0 or s mines occur in consistent layouts
            row = [0] * (s + 1)
            row[s] = w
        if b == nbox:
            int_f = row
        else:
            contrib[b] = row
    acc = {0: (0, 0)}
    for k, (boxes, res) in enumerate(comps):
        if any(b in contrib for b in boxes):
            part = _component_minmax(
                boxes, _cons_of(boxes, box_sig), cons, box_cells, box_sig, contrib
            )
        else:
            part = {m: (0, 0) for m in polys[k]}
        nxt: dict[int, tuple[int, int]] = {}
        for m1, (a1, b1) in acc.items():
            for m2, (a2, b2) in part.items():
                m = m1 + m2
                if m > remaining:
                    continue
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


def _cons_of(boxes, box_sig):
    sig = 0
    for b in boxes:
        sig |= box_sig[b]
    return _bits(sig)
