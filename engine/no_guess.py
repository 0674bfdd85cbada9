"""No-guess layouts for classic (single-player) Minesweeper.

Pure and deterministic: standard library only, no I/O, no clock, no global RNG.  Randomness
comes in as ``rng``, a ``random.Random``-like object of which only ``random``, ``randrange``,
``sample`` and ``shuffle`` are used.  Cells are ``(r, c)`` tuples, as in ``engine.deduce``.
docs/ENGINE.md ("No-guess layouts") describes the algorithm and the densities handled.

The acceptance rule (RULES.md, "Classic", no-guess mode): from the first click, with the
classic zero flood, open every hidden cell that :func:`engine.deduce.analyze` proves safe
(the numbers shown so far, no visible mines, the total mine count), again and again, until
every safe cell is open (accepted) or no hidden cell is provably safe (rejected).

>>> import random
>>> mines = no_guess_layout(30, 16, 99, (7, 14), random.Random(7))
>>> len(mines), any(abs(r - 7) <= 1 and abs(c - 14) <= 1 for r, c in mines)
(99, False)
>>> clears_without_guessing(30, 16, mines, (7, 14))
True

A 50/50 on the top edge: mines on (0, 0) and (0, 3), or on (0, 1) and (0, 4), show the same
numbers and use the same count.

>>> clears_without_guessing(5, 5, {(0, 0), (0, 3)}, (2, 2))
False
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from .deduce import _bits, analyze

__all__ = ["GenerationStats", "clears_without_guessing", "no_guess_layout", "solve_stats"]

Cell = tuple[int, int]

_INF = 1 << 62
STALL_RANDOM = 3
STALL_ALL = 6


# ---------------------------------------------------------------------------------------------
# Geometry
# ---------------------------------------------------------------------------------------------


class _Geo:
    """Per board size: cells by index ``r * width + c``, neighbour lists and bitmasks, and the
    cells within distance 2 (the constraints a constraint can share a cell with)."""

    __slots__ = ("cells", "height", "n", "nbr", "near", "nmask", "width")

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.n = width * height
        self.cells = tuple((r, c) for r in range(height) for c in range(width))

        def around(r: int, c: int, d: int) -> tuple[int, ...]:
            return tuple(
                rr * width + cc
                for rr in range(max(0, r - d), min(height, r + d + 1))
                for cc in range(max(0, c - d), min(width, c + d + 1))
                if rr != r or cc != c
            )

        self.nbr = tuple(around(r, c, 1) for r, c in self.cells)
        self.nmask = tuple(sum(1 << j for j in lst) for lst in self.nbr)
        self.near = tuple(around(r, c, 2) for r, c in self.cells)


@lru_cache(maxsize=16)
def _geo(width: int, height: int) -> _Geo:
    return _Geo(width, height)


def _check_board(width: object, height: object) -> _Geo:
    if width.__class__ is not int or height.__class__ is not int or width < 1 or height < 1:
        raise ValueError(f"bad board size {width!r}x{height!r}")
    return _geo(width, height)


def _index(geo: _Geo, cell: object, what: str) -> int:
    if cell.__class__ is not tuple or len(cell) != 2:
        raise ValueError(f"{what} {cell!r}: not an (r, c) cell")
    r, c = cell
    if r.__class__ is not int or c.__class__ is not int or not (0 <= r < geo.height and 0 <= c < geo.width):
        raise ValueError(f"{what} {cell!r}: not a cell of the board")
    return r * geo.width + c


def _block(geo: _Geo, i: int) -> list[int]:
    """The 3x3 block around cell ``i``, clipped at the border, ascending."""
    return sorted((i, *geo.nbr[i]))


# ---------------------------------------------------------------------------------------------
# The solver
# ---------------------------------------------------------------------------------------------


class _Solver:
    """Clears a board from its first click the way the acceptance rule does.

    Cheap local rules first: a number's own count (all its unknown neighbours safe, or all
    mines) and pairs of numbers that share unknown cells (the mines in the shared part are
    bounded by both, which can settle the cells only one of them sees).  Each derives only
    what holds in every layout that fits the numbers, so every cell they open is one the
    exact deduction proves safe too.  When they are stuck, ``engine.deduce.analyze`` decides
    (numbers shown, no visible mines, the total count).  Opening only provably safe cells
    until no more are, in any order, ends on the same set of open cells as the plain loop
    (the set of consistent layouts only shrinks as cells open, so a cell once provably safe
    stays so), hence the same verdict.

    ``order`` lists the open cells in the order they were opened; every cell was proved safe
    from the numbers of the cells before it (and the total).  The generator relies on that
    to roll back only as far as a change of layout requires.
    """

    __slots__ = (
        "dirty",
        "exact_calls",
        "flag",
        "geo",
        "kmask",
        "known",
        "local",
        "mine",
        "need",
        "num",
        "order",
        "pair_hits",
        "pos",
        "queue",
        "rev",
        "safe_left",
        "total",
        "unk",
        "unknown",
    )

    def __init__(self, geo: _Geo, mine: bytearray, total: int, *, local: bool = True) -> None:
        self.geo = geo
        self.mine = mine  # the layout: 1 on a mine (changed in place by the generator)
        self.total = total
        self.local = local  # use the local rules (off: analyze decides every step)
        self.exact_calls = 0
        self.pair_hits = 0
        self.reset([])

    def reset(self, keep: list[int]) -> None:
        """Start again from the open cells ``keep`` (in order), nothing else known."""
        geo = self.geo
        n = geo.n
        self.safe_left = n - self.total
        self.rev = rev = bytearray(n)  # 1: open
        self.known = bytearray(n)  # 1: a mine in every consistent layout (never opened)
        self.kmask = 0  # the same as a mask
        self.pos = pos = [-1] * n  # where in ``order`` an open cell is
        self.order = list(keep)
        self.num = num = [0] * n  # numbers of open cells
        self.need = need = [0] * n  # mines its unknown neighbours still hold
        self.unk = unk = [0] * n  # mask of its unknown neighbours (hidden, not known mines)
        self.flag = bytearray(n)  # 1: in ``dirty``
        self.dirty = []  # numbers to try in pairs
        unknown = (1 << n) - 1
        for p, i in enumerate(keep):
            rev[i] = 1
            pos[i] = p
            unknown ^= 1 << i
        self.unknown = unknown
        self.safe_left -= len(keep)
        mine = self.mine
        nbr = geo.nbr
        nmask = geo.nmask
        for i in keep:
            v = 0
            for j in nbr[i]:
                v += mine[j]
            num[i] = need[i] = v
            unk[i] = nmask[i] & unknown
        self.queue = list(reversed(keep))

    # -- state changes ------------------------------------------------------------------------

    def open(self, i: int) -> None:
        """Open hidden cell ``i`` (proved safe)."""
        geo = self.geo
        rev = self.rev
        unk = self.unk
        rev[i] = 1
        self.pos[i] = len(self.order)
        self.order.append(i)
        self.safe_left -= 1
        bit = 1 << i
        self.unknown ^= bit
        mine = self.mine
        known = self.known
        v = k = 0
        queue = self.queue
        for j in geo.nbr[i]:
            v += mine[j]
            k += known[j]
            if rev[j] and unk[j] & bit:
                unk[j] ^= bit
                queue.append(j)
        self.num[i] = v
        self.need[i] = v - k
        unk[i] = geo.nmask[i] & self.unknown
        queue.append(i)

    def set_mine(self, i: int) -> None:
        """Record hidden cell ``i`` as a certain mine."""
        self.known[i] = 1
        bit = 1 << i
        self.unknown ^= bit
        self.kmask |= bit
        rev = self.rev
        unk = self.unk
        need = self.need
        queue = self.queue
        for j in self.geo.nbr[i]:
            if rev[j]:
                unk[j] ^= bit
                need[j] -= 1
                queue.append(j)

    # -- rules --------------------------------------------------------------------------------

    def _settle(self, cells: int, mines: bool) -> None:
        while cells:
            low = cells & -cells
            cells ^= low
            i = low.bit_length() - 1
            if self.unknown & low:
                if mines:
                    self.set_mine(i)
                else:
                    self.open(i)

    def _single(self) -> None:
        """The single-number rule, until the queue is empty."""
        queue = self.queue
        unk = self.unk
        need = self.need
        flag = self.flag
        dirty = self.dirty
        while queue:
            j = queue.pop()
            u = unk[j]
            if not u:
                continue
            nd = need[j]
            if nd == 0:
                self._settle(u, False)
            elif nd == u.bit_count():
                self._settle(u, True)
            elif not flag[j]:
                flag[j] = 1
                dirty.append(j)

    def _pairs(self) -> bool:
        """The two-number rule on the numbers changed since they were last tried.  True if it
        settled a cell."""
        dirty = self.dirty
        flag = self.flag
        unk = self.unk
        need = self.need
        rev = self.rev
        near = self.geo.near
        while dirty:
            j = dirty.pop()
            flag[j] = 0
            a_all = unk[j]
            if not a_all:
                continue
            na = need[j]
            for k in near[j]:
                if not rev[k]:
                    continue
                b_all = unk[k]
                shared = a_all & b_all
                if not shared:
                    continue
                nb = need[k]
                a = a_all ^ shared
                b = b_all ^ shared
                sa = a.bit_count()
                sb = b.bit_count()
                lo = max(0, na - sa, nb - sb)
                hi = min(shared.bit_count(), na, nb)
                found = False
                # mines in a: na - hi .. na - lo; in b: nb - hi .. nb - lo
                if a:
                    if na - lo == 0:
                        self._settle(a, False)
                        found = True
                    elif na - hi == sa:
                        self._settle(a, True)
                        found = True
                if b:
                    if nb - lo == 0:
                        self._settle(b, False)
                        found = True
                    elif nb - hi == sb:
                        self._settle(b, True)
                        found = True
                if found:
                    self.pair_hits += 1
                    if not flag[j]:
                        flag[j] = 1
                        dirty.append(j)
                    return True
        return False

    def _exact(self) -> bool:
        """Ask ``analyze``; open what it proves safe, record what it proves mines.  True if it
        opened a cell."""
        self.exact_calls += 1
        geo = self.geo
        cells = geo.cells
        num = self.num
        a = analyze(geo.width, geo.height, self.total, {cells[i]: num[i] for i in self.order}, ())
        width = geo.width
        for r, c in sorted(a.mines):
            i = r * width + c
            if not self.known[i]:
                self.set_mine(i)
        safe = sorted(r * width + c for r, c in a.safe)
        for i in safe:
            if not self.rev[i]:
                self.open(i)
        return bool(safe)

    def run(self) -> bool:
        """Open every cell the rules reach; True iff every safe cell is open."""
        while True:
            if self.local:
                self._single()
                if self.safe_left == 0:
                    return True
                if self._pairs():
                    continue
            else:
                self.queue.clear()
                if self.safe_left == 0:
                    return True
            if not self._exact():
                return self.safe_left == 0


def _layout_bytes(geo: _Geo, mines: Iterable[object]) -> tuple[bytearray, int]:
    mine = bytearray(geo.n)
    for cell in mines:
        mine[_index(geo, cell, "mine")] = 1
    return mine, sum(mine)


def _start(geo: _Geo, mine: bytearray, total: int, first: int, local: bool) -> _Solver:
    s = _Solver(geo, mine, total, local=local)
    s.open(first)
    return s


def clears_without_guessing(width: int, height: int, mines: Iterable[Cell], first_click: Cell) -> bool:
    """True iff the acceptance rule clears the board from ``first_click`` with no guess.

    ``mines`` lists the mine cells (read as a set).  From the first click (a revealed 0
    opens its neighbours, recursively), every cell that ``engine.deduce.analyze`` proves safe
    from the numbers shown, no visible mines and the total count is opened, repeatedly; the
    answer is True iff that opens every safe cell.  Certain mines are never opened.  Cheap
    local rules run first; they only open cells the exact deduction proves safe too, so the
    answer is exactly the plain loop's.

    Raises ``ValueError`` for a bad size, a cell off the board or a mine on the first click.
    Mines in the first click's 3x3 block are allowed (the click then shows their count).

    >>> clears_without_guessing(5, 5, {(0, 0)}, (4, 4))
    True
    >>> clears_without_guessing(5, 5, {(0, 1), (2, 0), (4, 1)}, (2, 2))
    True
    """
    geo = _check_board(width, height)
    first = _index(geo, first_click, "first click")
    mine, total = _layout_bytes(geo, mines)
    if mine[first]:
        raise ValueError(f"the first click {first_click!r} is a mine")
    return _start(geo, mine, total, first, True).run()


def solve_stats(
    width: int, height: int, mines: Iterable[Cell], first_click: Cell, *, local_rules: bool = True
) -> dict[str, int | bool]:
    """What :func:`clears_without_guessing` does on this board: ``cleared`` (its answer),
    ``opened`` (cells open at the end), ``exact_calls`` (``analyze`` calls), ``pair_hits``
    (cells settled by the two-number rule).  ``local_rules=False`` skips the local rules:
    ``analyze`` then decides every step (the plain loop; same answer, slower).  For tests and
    benchmarks.

    Here the local rules get stuck once, and ``analyze`` settles the rest:

    >>> solve_stats(5, 5, {(0, 1), (2, 0), (4, 1)}, (2, 2))
    {'cleared': True, 'opened': 22, 'exact_calls': 1, 'pair_hits': 0}
    """
    geo = _check_board(width, height)
    first = _index(geo, first_click, "first click")
    mine, total = _layout_bytes(geo, mines)
    if mine[first]:
        raise ValueError(f"the first click {first_click!r} is a mine")
    s = _start(geo, mine, total, first, local_rules)
    cleared = s.run()
    return {"cleared": cleared, "opened": len(s.order), "exact_calls": s.exact_calls, "pair_hits": s.pair_hits}


# ---------------------------------------------------------------------------------------------
# The generator
# ---------------------------------------------------------------------------------------------


class GenerationStats:
    """Counters of :func:`no_guess_layout` calls (pass ``stats=GenerationStats()``; they add
    up over calls)."""

    __slots__ = (
        "attempts",
        "drawn",
        "draws",
        "exact_calls",
        "kept",
        "moved",
        "perturbations",
        "rejected",
        "rolled_back",
    )

    def __init__(self) -> None:
        self.draws = 0  # uniform layouts checked in the draw phase
        self.drawn = 0  # results that came from the draw phase (exact uniform samples)
        self.attempts = 0  # random layouts repaired (after the draws)
        self.perturbations = 0  # repairs made
        self.moved = 0  # mines moved by them
        self.exact_calls = 0  # analyze calls while generating (not in the final check)
        self.rolled_back = 0  # open cells forgotten by the roll-backs, in total
        self.kept = 0  # open cells the roll-backs kept, in total
        self.rejected = 0  # finished layouts the final check refused (never seen: a bug)

    def __repr__(self) -> str:
        return "GenerationStats(" + ", ".join(f"{k}={getattr(self, k)}" for k in self.__slots__) + ")"


def _perturb(s: _Solver, rng, banned: bytearray, choose: str) -> tuple[int, int] | None:
    """Change the layout so that the stuck solver ``s`` can go on.  Returns the position in
    ``s.order`` to roll back to (keep ``order[:p + 1]``) and how many mines moved, or None
    if this mode finds no repair.

    A *set* is picked: the unknown neighbours of one number (``choose`` ``"latest"``: the
    set whose change keeps the most open cells, ties at random; ``"random"``: any), or, in
    mode ``"all"``, every unknown cell at once.  With no number next to an unknown cell
    (the unknown cells walled off by certain mines), the sets are the certain mines next to
    an unknown cell, one each.  The set is then emptied or filled, as in Simon Tatham's
    generator: mines swap between the set and *partners*, hidden cells outside it and
    outside the first click's block.  The interior comes first (unknown cells next to no
    open cell: no shown number changes), then cells next to open cells: in ``"latest"``
    mode those whose open neighbours were opened latest first, in the escalated modes in
    random order (the latest ones are next to the cells that got stuck, and picking them
    every time can cycle).  Of emptying and filling, the one that keeps more open cells
    wins, then the one that moves fewer mines, then emptying.  Either way the number then
    settles its whole set by itself (in mode ``"all"``, the count does).

    The changed cells change the numbers of the open cells next to them.  Every cell opened
    after the earliest of those is forgotten; the cells before it stay valid, since each
    was proved safe from the numbers of earlier cells only, and those did not change.
    """
    geo = s.geo
    nbr = geo.nbr
    rev = s.rev
    pos = s.pos
    unk = s.unk
    mine = s.mine
    order = s.order
    latest = choose == "latest"
    if choose == "all":
        sets = [_bits(s.unknown)]
    else:
        sets = [_bits(unk[j]) for j in order if unk[j]]
    if not sets:
        unknown = s.unknown
        sets = [[x] for x in _bits(s.kmask) if geo.nmask[x] & unknown and not banned[x]]
        if not sets:
            return None

    # key(x) for a hidden cell: the earliest position among its open neighbours (_INF: none).
    def key(x: int) -> int:
        k = _INF
        for y in nbr[x]:
            if rev[y] and pos[y] < k:
                k = pos[y]
        return k

    if not latest:
        cells = sets[rng.randrange(len(sets))]
        skey = min(key(x) for x in cells)
    else:  # "latest": the set whose change keeps the most open cells, ties at random
        skey = -1
        picks: list[list[int]] = []
        for cells in sets:
            k = min(key(x) for x in cells)
            if k > skey:
                skey = k
                picks = [cells]
            elif k == skey:
                picks.append(cells)
        cells = picks[rng.randrange(len(picks))]

    in_set = set(cells)
    full = [x for x in cells if mine[x]]
    empty = [x for x in cells if not mine[x]]

    # Partners: hidden cells outside the set, not in the first click's block.
    interior_empty: list[int] = []
    interior_full: list[int] = []
    edge: list[tuple[int, float, int]] = []  # (-key, random, cell) for cells next to open ones
    hidden = s.unknown | s.kmask
    for x in _bits(hidden):
        if banned[x] or x in in_set:
            continue
        k = key(x)
        if k == _INF:
            # A certain mine with no open neighbour (walled in, or settled by the count) is no
            # partner: made safe, nothing could reach it.
            if not s.known[x]:
                (interior_full if mine[x] else interior_empty).append(x)
        else:
            edge.append((-k, rng.random(), x))
    rng.shuffle(interior_empty)
    rng.shuffle(interior_full)
    if latest:
        edge.sort()
    else:  # escalated: partners next to open cells in random order, to break cycles
        rng.shuffle(edge)
    edge_empty = [(-nk, x) for nk, _, x in edge if not mine[x]]
    edge_full = [(-nk, x) for nk, _, x in edge if mine[x]]

    def plan(need: int, inner: list[int], outer: list[tuple[int, int]]):
        if need > len(inner) + len(outer):
            return None
        chosen = inner[:need]
        k = skey
        rest = need - len(chosen)
        if rest:
            extra = outer[:rest]
            chosen = chosen + [x for _, x in extra]
            k = min(k, *(ek for ek, _ in extra))
        return k, chosen

    options = []
    e = plan(len(full), interior_empty, edge_empty)  # empty the set: its mines go to partners
    if full and e is not None:
        options.append((e[0], -len(full), 1, e[1]))
    f = plan(len(empty), interior_full, edge_full)  # fill it: partners' mines come in
    if empty and f is not None:
        options.append((f[0], -len(empty), 0, f[1]))
    if not options:
        return None
    k, _, emptying, partners = max(options)
    if emptying:
        for x in full:
            mine[x] = 0
        for x in partners:
            mine[x] = 1
    else:
        for x in empty:
            mine[x] = 1
        for x in partners:
            mine[x] = 0
    return k, len(partners)




def no_guess_layout(
    width: int,
    height: int,
    count: int,
    first_click: Cell,
    rng,
    *,
    redraws: int | None = None,
    max_attempts: int = 4,
    max_perturbations: int | None = None,
    choose: str = "latest",
    stats: GenerationStats | None = None,
) -> frozenset[Cell]:
    """A layout of ``count`` mines, none in the 3x3 block around ``first_click`` (clipped at
    the border), that :func:`clears_without_guessing` accepts.

    1. *Draws*: up to ``redraws`` uniform random layouts outside the block, each checked by
       :func:`clears_without_guessing` (the check stops at the first point where no cell is
       provably safe, so a rejection is cheap); the first accepted one is returned.  A
       layout found here is an exact uniform sample: every accepted layout is equally
       likely.  Default ``max(8, 24_000 // (width * height))`` draws: 50 on Expert, where
       about 1 uniform layout in 8 is accepted, so 99.9 % of Expert results come from here.
    2. *Repairs*, when no draw was accepted (dense or very large boards): a new uniform
       layout is cleared with the same solver, and each time the solver is stuck the layout
       is repaired (a few mines move so that the number picked settles its unknown
       neighbours by itself) and the solver resumes from the last position the change left
       valid.  At most ``max_attempts`` layouts, each with at most ``max_perturbations``
       repairs (default ``count + 50``); then ``ValueError``.  A repaired layout is returned
       only after :func:`clears_without_guessing` has accepted it from scratch.  ``choose``
       picks the number to repair: ``"latest"`` (the default: the one whose change keeps
       most of the solve, ties at random) or ``"random"`` (Tatham's choice).

    ``ValueError`` also for a bad size or first click, or a ``count`` that does not fit
    outside the block.  Deterministic given ``rng``'s state.  ``stats``, a
    :class:`GenerationStats`, counts the work.

    Every preset takes a few ms.  Every density has succeeded in the measurements, up to a
    board full but for the first click's block (docs/ENGINE.md gives the figures); repaired
    dense boards get mines packed where the solver got stuck.

    >>> import random
    >>> a = no_guess_layout(16, 16, 40, (0, 0), random.Random(1))
    >>> a == no_guess_layout(16, 16, 40, (0, 0), random.Random(1)), len(a), (1, 1) in a
    (True, 40, False)
    """
    geo = _check_board(width, height)
    first = _index(geo, first_click, "first click")
    block = _block(geo, first)
    banned = bytearray(geo.n)
    for i in block:
        banned[i] = 1
    free = [i for i in range(geo.n) if not banned[i]]
    if count.__class__ is not int or not 0 <= count <= len(free):
        raise ValueError(f"{count!r} mines do not fit a {width}x{height} board outside the first click's block")
    if redraws is None:
        redraws = max(8, 24_000 // geo.n)
    elif redraws.__class__ is not int or redraws < 0:
        raise ValueError(f"bad redraws {redraws!r}")
    if max_attempts.__class__ is not int or max_attempts < 1:
        raise ValueError(f"bad max_attempts {max_attempts!r}")
    if max_perturbations is None:
        max_perturbations = count + 50
    elif max_perturbations.__class__ is not int or max_perturbations < 0:
        raise ValueError(f"bad max_perturbations {max_perturbations!r}")
    if choose not in ("latest", "random"):
        raise ValueError(f"bad choose {choose!r}")
    st = stats if stats is not None else GenerationStats()
    cells = geo.cells
    for _ in range(redraws):
        st.draws += 1
        mine = bytearray(geo.n)
        for i in rng.sample(free, count):
            mine[i] = 1
        # This run is clears_without_guessing itself, on this layout: its True is the check.
        if _start(geo, mine, count, first, True).run():
            st.drawn += 1
            return frozenset(cells[i] for i in range(geo.n) if mine[i])
    for _ in range(max_attempts):
        st.attempts += 1
        mine = bytearray(geo.n)
        for i in rng.sample(free, count):
            mine[i] = 1
        s = _start(geo, mine, count, first, True)
        best = stall = 0
        for repairs in range(max_perturbations + 1):
            if s.run():
                layout = frozenset(cells[i] for i in range(geo.n) if mine[i])
                if clears_without_guessing(width, height, layout, first_click):
                    st.exact_calls += s.exact_calls
                    return layout
                st.rejected += 1  # pragma: no cover  (the roll-back rule makes this impossible)
                break  # pragma: no cover
            if repairs == max_perturbations:
                break
            # Escalate when repairs stop helping (stuck no further on than before): sets
            # picked at random after STALL_RANDOM such repairs, the whole unknown area
            # filled after STALL_ALL.  A mode that finds no repair hands over to the next.
            if len(s.order) > best:
                best = len(s.order)
                stall = 0
            else:
                stall += 1
            mode = choose if stall < STALL_RANDOM else "random" if stall < STALL_ALL else "all"
            got = None
            for m in (mode, "random", "all"):
                got = _perturb(s, rng, banned, m)
                if got is not None:
                    break
            if got is None:
                break
            p, moved = got
            p = min(p, len(s.order) - 1)  # _INF: the change touched no open cell
            st.perturbations += 1
            st.moved += moved
            st.rolled_back += len(s.order) - p - 1
            st.kept += p + 1
            calls = s.exact_calls
            s.reset(s.order[: p + 1])
            s.exact_calls = calls
        st.exact_calls += s.exact_calls
    raise ValueError(
        f"no no-guess layout of {count} mines on {width}x{height} found in {max_attempts} attempts"
    )
