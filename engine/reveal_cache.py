"""The duel's deduction auto-reveal, incremental: ``revealable(..., cache=RevealCache())``.

``engine.deduce.revealable`` solves every position from scratch.  In a duel consecutive
positions differ by a cell or two (the move, and what the previous auto-reveal opened), and most
of the frontier is the same from one version of a game to the next.  A :class:`RevealCache`
keeps what it worked out for recent positions of a game and, for a new position that extends
one of them (the same numbers plus some, the same visible mines plus some), re-solves only
what the new cells touched.  The answer is always exactly ``deduce.revealable``'s: see
``docs/ENGINE.md`` ("The incremental auto-reveal") for why, and ``tests/engine/test_reveal_cache.py``
for the comparisons against it and against brute force.

Pure and deterministic: no I/O, no clock, no global state.  Everything cached is derived from
the positions themselves; a state is reused only for a position that provably extends it, a
component's solution only for identical constraints.  Both stores are bounded, and a miss only
costs recomputation.  One cache may serve a duel, its copies and its decoded later versions,
also when two different moves are applied to two copies of one position.

How a position is described (all masks are Python ints over cell indices ``r * width + c``):

- ``safe``/``mine``: hidden cells settled by the single-number rule (``deduce._simplify``);
- ``unknown``: the other hidden cells; ``rem``: the mines among them;
- the reduced constraints (mines needed, mask of unknown cells), split into independent
  components (no shared cell); the unknown cells in no constraint are the *interior*.

Unlike ``deduce``, which counts layouts, this only asks which mine counts are *possible*: a
component's forward pass carries its solutions themselves (nearly every duel component has a
handful), or, for one with many, bitsets of the possible mine counts, never big-int polynomials.
Components are solved in ``engine.component`` and restricted to the counts the rest of the board
allows in ``engine.restriction``; this module keeps the positions, extends them, combines the
components and decides the cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from itertools import islice

from .component import _Comp, _derive
from .deduce import _bits, _geometry
from .restriction import _VARY

__all__ = ["RevealCache"]

Cell = tuple[int, int]
_STATS = ("extended", "fresh", "repeated", "component_hits", "component_builds", "component_derived")


class RevealCache:
    """What ``engine.deduce.revealable`` worked out for recent positions, to answer the next
    ones of the same game by re-solving only what changed.

    Why: the duel auto-reveals after every move, and solving each position from scratch was a
    third of the server's CPU per move; a move changes one or two cells, so nearly all of that
    work repeats the previous position's.  Use one cache per game (``Duel`` keeps it beside its
    ``memo`` and shares it with its copies)::

        cache = RevealCache()
        revealable(11, 11, 15, numbers, mines, cache=cache)   # == revealable(11, 11, 15, numbers, mines)

    Keeps the last ``states`` positions solved (a new one is solved from the most recent of them
    that it extends, or from scratch) and up to ``components`` solved frontier components, keyed
    by their constraints (``components=0``: none); each store is cleared or trimmed when full.
    ``stats`` counts what was reused (for tests and benchmarks; it never changes an answer).
    The counts are slots of the cache, not a dict of its own: an auto-reveal under load finds
    a room's cache gone cold since its last move, and a dict is one more object to fetch.
    """

    __slots__ = ("_board", "_comp_limit", "_comps", "_state_limit", "_states", *_STATS)

    def __init__(self, states: int = 4, components: int = 16) -> None:
        if states < 1 or components < 0:
            raise ValueError("bad cache limits: states must be positive, components not negative")
        self._states: list[_State] = []
        self._comps: dict[tuple, _Comp] = {}
        self._state_limit = states
        self._comp_limit = components
        self._board: tuple = (None, None, None)  # (width, height), geometry, dilation masks
        self.extended = self.fresh = self.repeated = 0
        self.component_hits = self.component_builds = self.component_derived = 0

    @property
    def stats(self) -> dict[str, int]:
        """What was reused so far: positions extended, solved afresh, repeated; components
        found in the store, built, derived."""
        return {name: getattr(self, name) for name in _STATS}

    def __len__(self) -> int:
        """Positions held (at most ``states``)."""
        return len(self._states)

    def clear(self) -> None:
        self._states.clear()
        self._comps.clear()

    def revealable(
        self,
        width: int,
        height: int,
        total_mines: int,
        numbers: Mapping[Cell, int],
        visible_mines: Iterable[Cell],
    ) -> dict[Cell, int]:
        """``engine.deduce.revealable(width, height, total_mines, numbers, visible_mines)``,
        the same dict (same order) and the same ``ValueError``s, from the cached positions."""
        return self._solve(width, height, total_mines, numbers, visible_mines).answer(self._board[1])

    def extend(self, base: _State | None, number: tuple[Cell, int] | None, mine: Cell | None,
               width: int, height: int, total_mines: int, numbers: Mapping[Cell, int],
               visible_mines: Iterable[Cell]) -> tuple[_State, dict[Cell, int]]:
        """``(the position solved, revealable(width, height, total_mines, numbers,
        visible_mines))`` for a caller that knows how the position extends ``base``, a position
        solved before (the first item of an earlier answer; ``None``: not known): ``numbers``
        is ``base``'s numbers, then the cells ``base`` found revealable with their numbers (in
        the order of its answer), then ``number`` (a ``(cell, value)``, if any);
        ``visible_mines`` is ``base``'s, then ``mine`` (if any)::

            base, found = cache.extend(base, number, mine, width, height, total, numbers, visible)

        The answer is exactly ``revealable``'s: the new items are checked as ever, and if the
        sizes of ``numbers`` and ``visible_mines`` do not add up to the account the position is
        found as :meth:`revealable` finds it.  Only the comparison of every number and visible
        mine with the cached position's is left out, which is what the caller vouches for.
        ``engine.Duel`` is that caller (its numbers and claims are dicts it only ever adds to).

        Why: that comparison, and reading the new items off the end of the numbers, was an
        eighth of the auto-reveal's instructions per explore move (~35k of ~260k under
        callgrind, bench/path.py); the base's own found cells, already as indices, cost a few
        hundred."""
        if base is None:
            state = self._solve(width, height, total_mines, numbers, visible_mines)
        else:
            state = self._solve_from(base, number, mine, width, height, total_mines, numbers, visible_mines)
        return state, state.answer(self._board[1])

    def _solve(self, width, height, total_mines, numbers, visible_mines) -> _State:
        """The solved position of ``revealable``'s arguments (from a cached one if it can)."""
        if width.__class__ is not int or height.__class__ is not int or width <= 0 or height <= 0:
            raise ValueError(f"bad board size {width!r}x{height!r}")
        if total_mines.__class__ is not int or total_mines < 0:
            raise ValueError(f"bad mine count {total_mines!r}")
        board = self._board
        if board[0] != (width, height):
            board = self._board = ((width, height), _geometry(width, height), _shifts(width, height))
        geo = board[1]
        index = geo.index
        key = (width, height, total_mines)
        states = self._states
        last = states[-1] if states else None
        # Inputs equal to a cached position's are not checked again: the visible mines as a
        # tuple, the numbers as lists of keys and values (C-level comparisons, which match
        # identical objects at once: a duel's copies share their cells and ints).
        vis_cells = tuple(visible_mines)
        if last is not None and last.key == key and last.vis_cells == vis_cells:
            vis = last.vis
        else:
            vis = 0
            for cell in vis_cells:
                i = index.get(cell) if cell.__class__ is tuple else None
                if i is None:
                    raise ValueError(f"visible mine at {cell!r}: not a cell of the board")
                vis |= 1 << i
        keys = list(numbers)
        values = list(numbers.values())
        n = len(keys)
        parent = None
        tail = None  # the (cell, value) items new since the parent
        if last is not None and last.key == key and not last.vis & ~vis:
            pn = last.nnum
            # A duel adds its numbers at the end of its dict: the parent's usually come first.
            if pn <= n and keys[:pn] == last.keys[:pn] and values[:pn] == last.values[:pn]:
                parent = last
                tail = list(zip(keys[pn:], values[pn:]))
        if parent is None:
            for k in range(len(states) - 1, -1, -1):
                st = states[k]
                if (
                    st.key == key
                    and st.nnum <= n
                    and not st.vis & ~vis
                    and st.numbers.items() <= numbers.items()
                ):
                    parent = st
                    pnums = st.numbers
                    tail = [item for item in numbers.items() if item[0] not in pnums]
                    break
        if parent is not None and not tail and parent.vis == vis:
            self.repeated += 1
            if parent is not last:
                states.remove(parent)
                states.append(parent)
            return parent
        if parent is None:
            self.fresh += 1
            parent = _State.empty(key, geo)
            tail = list(numbers.items())
        else:
            self.extended += 1
        # The cells new since the parent, checked as deduce._parse checks every cell.
        new = []
        for cell, value in tail:
            i = index.get(cell) if cell.__class__ is tuple else None
            if i is None:
                raise ValueError(f"number at {cell!r}: not a cell of the board")
            if value.__class__ is not int or not 0 <= value <= 8:
                raise ValueError(f"bad number {value!r} at {cell!r}")
            new.append((i, value))
        new.sort()
        state = _extend(self, geo, board[2], parent, new, vis, total_mines)
        state.keys = keys
        state.nnum = n
        state.values = values
        state.vis_cells = vis_cells
        self._keep(state)
        return state

    def _keep(self, state: _State, parent: _State | None = None) -> None:
        """Hold ``state`` as the latest position, the oldest dropped when full; in place of
        ``parent``, the position :meth:`extend` extended, if that is the latest held.

        Why the parent: dropping the oldest of four positions freed one solved three moves
        earlier, whose memory had gone cold meanwhile (with the components only it held), and
        freeing it touched all of it again; the parent is dropped while it is still in the
        CPU's caches (docs/PERFORMANCE.md, tenth session). Only for an extension: another
        copy of the parent extends it by naming it as the base (``Duel._solved``), never
        through this list; a position found here (a decoded version) may have siblings that
        need it."""
        states = self._states
        if parent is not None and states and states[-1] is parent:
            states[-1] = state
            return
        if len(states) >= self._state_limit:
            del states[0]
        states.append(state)

    def _solve_from(self, base: _State, number, mine, width, height, total_mines, numbers, visible_mines) -> _State:
        """:meth:`_solve` for a position known to extend ``base`` (:meth:`extend`): the new
        items are ``base``'s revealed cells and ``number``, the new visible mine ``mine``; if the
        sizes of ``numbers`` and ``visible_mines`` do not add up to that, solved as
        :meth:`_solve` does."""
        board = self._board
        reveal = base.reveal
        nv = len(base.vis_cells)
        if (
            base.key != (width, height, total_mines)
            or board[0] != (width, height)
            or len(numbers) != base.nnum + len(reveal) + (number is not None)
            or len(visible_mines) != nv + (mine is not None)
        ):
            return self._solve(width, height, total_mines, numbers, visible_mines)
        geo = board[1]
        vis = base.vis
        vis_cells = base.vis_cells
        if mine is not None:
            i = geo.index.get(mine) if mine.__class__ is tuple else None
            if i is None:
                raise ValueError(f"visible mine at {mine!r}: not a cell of the board")
            vis |= 1 << i
            vis_cells = (*vis_cells, mine)
        new = sorted(reveal.items()) if reveal else []  # numbers the base found, with their values
        if number is not None:
            cell, value = number
            i = geo.index.get(cell) if cell.__class__ is tuple else None
            if i is None:
                raise ValueError(f"number at {cell!r}: not a cell of the board")
            if value.__class__ is not int or not 0 <= value <= 8:
                raise ValueError(f"bad number {value!r} at {cell!r}")
            tail = [*new, (i, value)]
            if new:
                new = sorted(tail)
            else:
                new = tail
        elif not new and mine is None:
            self.repeated += 1
            return base
        else:
            tail = new
        self.extended += 1
        state = _extend(self, geo, board[2], base, new, vis, total_mines)
        if tail:  # the numbers' keys and values in the order the caller added them
            cells = geo.cells
            keys = base.keys
            values = base.values
            if len(keys) != base.nnum:  # another position extended the base already (see _State)
                keys = keys[:base.nnum]
                values = values[:base.nnum]
            for i, v in tail:
                keys.append(cells[i])
                values.append(v)
            state.keys = keys
            state.values = values
        else:
            state.keys, state.values = base.keys, base.values
        state.nnum = base.nnum + len(tail)
        state.vis_cells = vis_cells
        self._keep(state, base)
        return state

    def _component(self, cons: tuple) -> _Comp:
        comp = self._comps.get(cons)
        if comp is not None:
            self.component_hits += 1
            return comp
        comp = _Comp(cons)  # raises ValueError when the constraints admit no layout
        self.component_builds += 1
        self._store(cons, comp)
        return comp

    def _store(self, cons: tuple, comp: _Comp) -> None:
        if not self._comp_limit:
            return
        if len(self._comps) >= self._comp_limit:
            self._comps.clear()
        self._comps[cons] = comp


# ---------------------------------------------------------------------------------------------
# A solved position
# ---------------------------------------------------------------------------------------------


class _State:
    """One solved position; never changed once made (copies of a duel share them).

    ``keys`` and ``values``: the position's numbers (cells, values) in the caller's order are
    the first ``nnum`` items of these lists, which a position shares with the positions that
    extend it: the first one to extend it appends to them, a later one copies its prefix.
    Why: copying them for every move (two lists of up to ~100 items, touching every item) cost
    about 5 of the auto-reveal's ~76 us under load, memory gone cold since the room's last move
    (docs/PERFORMANCE.md, tenth session)."""

    __slots__ = (
        "key", "_numbers", "nummask", "vis", "safe", "mine", "unknown", "rem",
        "parts", "interior", "nint", "int_kset", "int_key", "safe_all", "reveal", "global_dep",
        "keys", "nnum", "values", "vis_cells",
    )

    @classmethod
    def empty(cls, key, geo) -> _State:
        """The position before any number: every cell unknown, nothing to reuse."""
        st = cls()
        st.key = key
        st.nummask = st.vis = st.safe = st.mine = 0
        st.unknown = geo.full
        st.rem = -1  # never a real position's: nothing of it is reused
        st.parts = ()
        st.interior = geo.full
        st.nint = len(geo.cells)
        st.int_kset = 0
        st.int_key = None  # never equal to a real position's
        st.safe_all = 0
        st.reveal = {}
        st.global_dep = 0
        st.keys = []
        st.values = []
        st.nnum = 0
        st.vis_cells = ()
        return st

    @property
    def numbers(self) -> dict[Cell, int]:
        """The position's numbers as a dict (made on first use)."""
        try:
            return self._numbers
        except AttributeError:
            self._numbers = d = dict(zip(islice(self.keys, self.nnum), self.values))
            return d

    def answer(self, geo) -> dict[Cell, int]:
        reveal = self.reveal
        if not reveal:
            return {}
        cells = geo.cells
        out = {}
        for i in sorted(reveal):
            out[cells[i]] = reveal[i]
        return out


def _extend(cache: RevealCache, geo, shifts, parent: _State, new, vis: int, total: int) -> _State:
    """The position ``parent`` plus the numbers ``new`` ((index, value), ascending) and the
    visible mines ``vis`` (a superset of the parent's), solved reusing what did not change.

    Exact because every layout of the new position, with the newly visible mines put back as
    mines, is a layout of the parent position; so the parent's settled cells and reduced
    constraints still hold, and adding the new facts (a new number's cell is safe, a newly
    visible mine is a mine) and the new numbers' constraints describes the new position exactly.
    """
    nmasks = geo.nmasks
    new_num = 0
    for i, _ in new:
        new_num |= 1 << i
    nummask = parent.nummask | new_num
    both = nummask & vis
    if both:
        cell = geo.cells[both.bit_length() - 1]
        raise ValueError(f"cell {cell} is both a number and a visible mine")
    new_vis = vis & ~parent.vis
    p_safe, p_mine, p_unknown = parent.safe, parent.mine, parent.unknown
    if new_num & p_mine or new_vis & p_safe:
        raise ValueError("no consistent layout")
    fact = (new_num | new_vis) & p_unknown  # cells leaving the unknown ones
    fact_mine = new_vis & p_unknown
    safe = p_safe & ~new_num
    mine = p_mine & ~new_vis
    unknown = p_unknown & ~fact

    # --- constraints to solve again: the parent's components the new facts touch, and the new
    # numbers' constraints.  A new number the parent had found revealable with this very value
    # adds nothing (its count holds in every layout already): it only becomes a safe fact.
    left: dict[int, int] = {}  # mask -> need: the constraints of the components to solve again
    active = []  # (need, mask): constraints to check with the single-number rule
    clean = []  # the parent's (component, rest) pairs untouched so far
    dirty = []  # the parent's components whose constraints are solved again
    for part in parent.parts:
        comp = part[0]
        if comp.mask & fact:
            dirty.append(comp)
            for need, m in comp.cons:
                if m & fact:
                    active.append((need - (m & fact_mine).bit_count(), m & ~fact))
                else:
                    left[m] = need
        else:
            clean.append(part)
    p_reveal = parent.reveal
    fixed = vis | mine
    for i, v in new:
        if p_reveal.get(i) != v:
            nm = nmasks[i]
            active.append((v - (nm & fixed).bit_count(), nm & unknown))

    # --- settle by the single-number rule (deduce._simplify), checking again only what sees a
    # cell settled now, and pulling in every component a constraint kept now or a cell settled
    # now touches -----------------------------------------------------------------------------
    settled_safe = settled_mine = 0
    while active:
        known = settled_safe | settled_mine
        fresh = added = 0  # cells settled, masks of constraints kept, in this round
        for need, mask in active:
            if mask & known:
                need -= (mask & settled_mine).bit_count()
                mask &= ~known
            if need <= 0:
                if need:
                    raise ValueError("no consistent layout")
                if mask:
                    settled_safe |= mask
                    known |= mask
                    fresh |= mask
                continue
            size = mask.bit_count()
            if need >= size:
                if need > size:
                    raise ValueError("no consistent layout")
                settled_mine |= mask
                known |= mask
                fresh |= mask
                continue
            other = left.get(mask)
            if other is None:
                left[mask] = need
                added |= mask
            elif other != need:
                raise ValueError("no consistent layout")
        active = []
        if fresh:
            for m in list(left):
                if m & fresh:
                    active.append((left.pop(m), m))
        touch = fresh | added
        if clean and touch:
            keep = []
            for part in clean:
                comp = part[0]
                if comp.mask & touch:
                    dirty.append(comp)
                    for need, m in comp.cons:
                        if m & fresh or m in left:
                            active.append((need, m))
                        else:
                            left[m] = need
                else:
                    keep.append(part)
            clean = keep
    settled = settled_safe | settled_mine
    safe |= settled_safe
    mine |= settled_mine
    unknown &= ~settled
    rem = total - vis.bit_count() - mine.bit_count()
    if rem < 0:
        raise ValueError("no consistent layout")

    # --- the new components: constraints linked by shared cells ------------------------------
    groups: list[list] = []  # [mask, constraints], pairwise disjoint masks
    for m, need in left.items():
        gm = m
        gc = [(need, m)]
        keep = []
        for g in groups:
            if g[0] & gm:
                gm |= g[0]
                gc += g[1]
            else:
                keep.append(g)
        keep.append([gm, gc])
        groups = keep
    comps = []
    for part in clean:
        comps.append(part[0])
    if dirty and groups:
        # each group from the parent's components it holds the cells of, if none is split
        # between groups (see _derive)
        hits = [0] * len(dirty)
        for gm, _ in groups:
            for j, comp in enumerate(dirty):
                if comp.mask & gm:
                    hits[j] += 1
        gone_mine = vis | mine
        for gm, gc in groups:
            gc.sort()
            cons = tuple(gc)
            olds = []
            whole = True  # no old component of this group is split with another group
            for j, comp in enumerate(dirty):
                if comp.mask & gm:
                    if hits[j] == 1:
                        olds.append(comp)
                    else:
                        whole = False
            comp = None
            if olds and whole:
                comp = cache._comps.get(cons)
                if comp is None:
                    comp = _derive(olds, cons, unknown, gone_mine)
                    if comp is not None:
                        cache.component_derived += 1
                        cache._store(cons, comp)
            comps.append(comp if comp is not None else cache._component(cons))
    else:
        for _, gc in groups:
            gc.sort()
            comps.append(cache._component(tuple(gc)))

    # --- which mine counts each component may hold, given the others and the interior -------
    frontier = 0
    for comp in comps:
        frontier |= comp.mask
    interior = unknown & ~frontier
    nint = interior.bit_count()
    changed = fact | settled  # and below the components that are not the parent's: that
    # covers the parent's components solved again (their unknown cells are all in new ones)
    if not groups and len(clean) == len(parent.parts) and rem == parent.rem and nint == parent.nint:
        # the same components and counts: the same answer for each
        parts = parent.parts
        int_kset = parent.int_kset
        int_key = parent.int_key
        safe_all = (parent.safe_all | settled_safe) & ~new_num
    else:
        feasible = []
        for comp in comps:
            feasible.append(comp.feasible)
        allowed, int_kset = _combine(feasible, rem, nint)
        parts = []
        safe_all = safe
        nclean = len(clean)
        for k, comp in enumerate(comps):
            a = allowed[k]
            rest = comp.last
            if rest is None or rest.allowed != a:
                rest = comp.rest(a)
            safe_all |= rest.safe
            if k < nclean and rest is clean[k][1]:
                parts.append(clean[k])  # the parent's pair itself: nothing new to keep
            else:
                parts.append((comp, rest))
                changed |= comp.mask
        parts = tuple(parts)
        if int_kset == 1:
            safe_all |= interior
        int_key = -1 if nint > 8 and int_kset & ((1 << nint) - 2) else (nint, int_kset)

    # --- which safe cells must be decided again ---------------------------------------------
    # A cell's verdict depends on its neighbours' status, on the components (and mine counts
    # allowed) its unknown neighbours belong to, and on the interior if it touches it; verdicts
    # that needed the whole board (global_dep) are always redone.  A cell safe now and not
    # before is among them: it was settled now, or lies in a changed component, or in the
    # interior, which became safe (so its int_key changed).
    # A cell that sees part of the interior while the interior's count varies (int_partial)
    # is not revealable; with more than 8 interior cells every cell that sees it sees only part.
    no_first, no_last, width, full = shifts  # (_dilate, inline)
    h = changed | (changed << 1) & no_first | (changed >> 1) & no_last
    redo = (h | h << width | h >> width) & full | parent.global_dep
    int_partial = int_kset & ((1 << nint) - 2)  # seen in part, the interior varies
    blind = int_partial and nint > 8
    if int_key != parent.int_key or blind:
        h = interior | (interior << 1) & no_first | (interior >> 1) & no_last
        near = (h | h << width | h >> width) & full
        if int_key != parent.int_key:
            redo |= near
    redo &= safe_all
    reveal = {}
    if p_reveal:
        keep = safe_all & ~redo
        for i, v in p_reveal.items():
            if keep >> i & 1:
                reveal[i] = v
    if blind:
        redo &= ~near
    global_dep = 0
    if redo:
        # Each cell's verdict, as deduce._solve decides it; the rare case of several parts
        # varying with their mine counts goes to _several_vary.
        fixed = vis | mine
        front = unknown ^ interior  # the unknown cells in components
        int_single = not int_kset & (int_kset - 1)
        todo = redo
        while todo:  # (from the top: the order of reveal does not matter, answer sorts it)
            x = todo.bit_length() - 1
            todo ^= 1 << x
            nb = nmasks[x]
            count = (nb & fixed).bit_count()
            nbu = nb & front
            ni = nb & interior if nint else 0
            if not nbu and not ni:
                reveal[x] = count
                continue
            nvary = 0
            int_row = None
            if ni:  # interior cells (interchangeable): int_kset says how many mines they hold
                wi = ni.bit_count()
                if int_partial and wi < nint:
                    continue  # a mine can move across the border of what x sees
                if int_single:
                    count += wi if int_kset >> nint else (int_kset.bit_length() - 1) * wi // nint
                else:
                    int_row = {r: r for r in _bits(int_kset)} if wi == nint else {0: 0, nint: wi}
                    nvary = 1
            touched = []  # (part index, rest, cells seen) of the parts whose count varies
            if nbu:
                for pi, (comp, rest) in enumerate(parts):
                    w = nbu & comp.mask
                    if w:
                        r = rest._seen.get(w, rest)
                        if r is rest:
                            r = rest.seen(w)
                        if r.__class__ is int:
                            count += r
                        elif r is _VARY:
                            nvary = -1
                            break
                        else:
                            count += r[0]
                            nvary += len(r[1])
                            touched.append((pi, rest, w))
                        nbu ^= w
                        if not nbu:
                            break
            if nvary == 0:
                reveal[x] = count
            elif nvary > 1:  # (one box or the interior of several counts: each occurs)
                value, dep = _several_vary(count, touched, int_row, parts, rem, nint)
                if value is not None:
                    reveal[x] = value
                if dep:
                    global_dep |= 1 << x

    st = _State()
    st.key = parent.key
    st.nummask = nummask
    st.vis = vis
    st.safe = safe
    st.mine = mine
    st.unknown = unknown
    st.rem = rem
    st.parts = parts
    st.interior = interior
    st.nint = nint
    st.int_kset = int_kset
    st.int_key = int_key
    st.safe_all = safe_all
    st.reveal = reveal
    st.global_dep = global_dep
    return st


@lru_cache(maxsize=16)
def _shifts(width: int, height: int) -> tuple[int, int, int, int]:
    """Masks for :func:`_dilate`: the board but its first column, but its last column."""
    full = (1 << (width * height)) - 1
    first = sum(1 << (r * width) for r in range(height))
    return full & ~first, full & ~(first << (width - 1)), width, full


def _dilate(shifts: tuple[int, int, int, int], mask: int) -> int:
    """The cells of ``mask`` and their neighbours."""
    no_first, no_last, width, full = shifts
    h = mask | (mask << 1) & no_first | (mask >> 1) & no_last
    return (h | h << width | h >> width) & full


# ---------------------------------------------------------------------------------------------
# Combining components: bitsets of possible mine counts
# ---------------------------------------------------------------------------------------------


def _conv(a: int, b: int) -> int:
    """Sumset of two bitsets: bit s set iff s = i + j with bit i of a and bit j of b."""
    out = 0
    while a:
        low = a & -a
        out |= b * low
        a ^= low
    return out


def _smear(x: int, n: int) -> int:
    """Sumset of ``x`` and {0, 1, ..., n}."""
    span = 1
    while span <= n:
        step = min(span, n + 1 - span)
        x |= x << step
        span += step
    return x


def _combine(feasible: list[int], rem: int, nint: int) -> tuple[list[int], int]:
    """Given each component's possible mine counts (bitsets), ``rem`` mines to place and
    ``nint`` interior cells: each component's mine counts that some consistent layout uses,
    and the interior's (bit r: r interior mines).  Raises ``ValueError`` if there is none.

    When the components' most mines fit (``hi <= rem``) and their fewest leave no more than the
    interior holds (``lo >= rem - nint``), every combination of counts leaves the interior
    between 0 and ``nint`` mines: every count stays allowed, and the interior's counts are
    ``rem`` less the sums of the counts: no sumsets per component then."""
    lo = hi = 0
    for f in feasible:
        lo += (f & -f).bit_length() - 1
        hi += f.bit_length() - 1
    if hi <= rem and lo + nint >= rem:
        if lo == hi:
            return feasible, 1 << (rem - lo)
        sums = 0  # the sums of counts, less lo
        for f in feasible:
            if f & (f - 1):
                f >>= (f & -f).bit_length() - 1
                sums = _conv(f, sums) if sums else f
        # bit s of sums is lo + s mines in the components, rem - lo - s in the interior: read
        # sums backwards (bin's digits reversed) and place its top, hi - lo, at rem - hi
        return feasible, int(bin(sums)[:1:-1], 2) << (rem - hi)
    fixed = 0
    var = []
    for k, f in enumerate(feasible):
        if f & (f - 1):
            var.append(k)
        else:
            fixed += f.bit_length() - 1
    r2 = rem - fixed  # mines for the components of several counts and the interior
    if r2 < 0:
        raise ValueError("no consistent layout")
    if not var:
        if r2 > nint:
            raise ValueError("no consistent layout")
        return feasible, 1 << r2
    cap = (2 << r2) - 1
    sums = 1
    for k in var:
        sums = _conv(feasible[k], sums) & cap
    if r2 > nint:
        sums &= ~((1 << (r2 - nint)) - 1)  # the interior cannot hold the rest
    if not sums:
        raise ValueError("no consistent layout")
    int_kset = 0
    while sums:
        low = sums & -sums
        int_kset |= 1 << (r2 - low.bit_length() + 1)
        sums ^= low
    allowed = list(feasible)
    if nint >= r2:
        # the interior takes any rest: a count m is possible iff the others' least fit beside it
        least = 0
        for k in var:
            f = feasible[k]
            least += (f & -f).bit_length() - 1
        for k in var:
            f = feasible[k]
            allowed[k] = f & ((2 << (r2 - least + (f & -f).bit_length() - 1)) - 1)
        return allowed, int_kset
    pre = [1]
    for k in var:
        pre.append(_conv(feasible[k], pre[-1]) & cap)
    suf = 1
    for j in range(len(var) - 1, -1, -1):
        k = var[j]
        f = feasible[k]
        t = _smear(_conv(pre[j], suf) & cap, nint) & cap  # what the others and the interior hold
        a = 0
        for m in _bits(f):
            if m <= r2 and t >> (r2 - m) & 1:
                a |= 1 << m
        allowed[k] = a
        suf = _conv(f, suf) & cap
    return allowed, int_kset


# ---------------------------------------------------------------------------------------------
# A safe cell's number (the common cases are decided in _extend)
# ---------------------------------------------------------------------------------------------


def _several_vary(count, touched, int_row, parts, rem, nint) -> tuple[int | None, bool]:
    """A safe cell's number, ``count`` plus what the ``touched`` parts and the interior
    (``int_row``) add, when more than one box varies: if it is the same in every consistent
    layout, else None; and whether that took the whole board (the mine counts of components
    the cell does not touch), which makes the verdict one to redo every time."""
    funcs = {}
    for pi, rest, w in touched:
        f = rest.func(parts[pi][0], w)
        if f is _VARY:
            return None, False
        values = set(f.values())
        if len(values) == 1:
            count += values.pop()
        else:
            funcs[pi] = f
    if not funcs and int_row is None:
        return count, False
    if len(funcs) + (int_row is not None) == 1:
        return None, False  # one part varies with its mine count: each count occurs
    # the mine counts of components x does not touch take part: redone every time
    extra = _varying_count(funcs, int_row, parts, rem, nint)
    return (None if extra is None else count + extra), True


def _varying_count(funcs, int_row, parts, rem, nint):
    """Several parts add counts that depend on their mine counts (``funcs``: part index ->
    {m: count}; ``int_row``: interior mines -> count, or None): their sum if it is the same
    over every combination of the parts' allowed mine counts that leaves the interior between
    0 and ``nint`` of the ``rem`` mines (else None)."""
    acc = {0: (0, 0)}
    for pi, (comp, rest) in enumerate(parts):
        row = funcs.get(pi)
        items = list(row.items()) if row is not None else [(m, 0) for m in _bits(rest.allowed)]
        nxt: dict[int, tuple[int, int]] = {}
        for m1, (a1, b1) in acc.items():
            for m2, d in items:
                m = m1 + m2
                if m > rem:
                    continue
                old = nxt.get(m)
                if old is None:
                    nxt[m] = (a1 + d, b1 + d)
                else:
                    nxt[m] = (min(old[0], a1 + d), max(old[1], b1 + d))
        acc = nxt
    lo = hi = None
    for m, (a, b) in acc.items():
        r = rem - m
        if r > nint:
            continue
        f = int_row[r] if int_row is not None else 0
        lo = a + f if lo is None else min(lo, a + f)
        hi = b + f if hi is None else max(hi, b + f)
    if lo is None or lo != hi:
        return None
    return lo
