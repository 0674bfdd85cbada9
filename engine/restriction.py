"""A component of the auto-reveal restricted to the mine counts the rest of the board allows
(``engine.reveal_cache``, ``engine.component``): each box's possible counts, the cells safe in
every such layout, and what the cells a safe cell sees add to its number.  See
``docs/ENGINE.md`` ("The incremental auto-reveal"), steps 6 and 7.  Pure: no I/O, no clock, no
global state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .deduce import _bits

if TYPE_CHECKING:
    from .component import _Comp

_VARY = None  # a verdict part: the count around a cell varies


class _Rest:
    """A component restricted to the mine counts ``allowed`` (those some consistent layout
    of the whole board gives it): each box's possible mine counts (``ksets``, bit k) and the
    cells safe in every such layout (``safe``).  For the cells ``w`` of the component a safe
    cell sees, ``seen(w)`` and ``func(comp, w)`` say what they add to its number (memoised).

    It holds no reference to its component, which keeps it (``_Comp.rest``): that pair would be
    a reference cycle, freed only by the cyclic GC once the reveal cache lets the component go,
    and it was most of the server's cyclic garbage under load (docs/PERFORMANCE.md, nineteenth
    session). Whoever asks ``func`` has the component at hand."""

    __slots__ = ("_func", "_seen", "allowed", "ksets", "mid", "mines", "multi", "partial", "safe")

    def __init__(self, comp: _Comp, allowed: int) -> None:
        self.allowed = allowed
        self._seen: dict[int, object] = {}
        self._func: dict[int, object] | None = None  # made on first use: few restrictions are asked
        sols = comp.sols
        if sols is not None:
            if comp.feasible & ~allowed:
                sols = [code for code in sols if allowed >> (code & 255) & 1]
            if sols:
                self._read(comp, sols)
                return
            ksets = [0] * len(comp.box_sizes)
        elif comp.layers is None:
            ksets = [allowed]
        else:
            # Backward pass: g[state] is the set of mine counts the boxes before it may hold
            # for some completion to end with an allowed total.  Box i holds k in some allowed
            # layout iff a forward count at a state meets g of the state k mines lead to.
            n = len(comp.box_sizes)
            ksets = [0] * n
            g = {0: allowed}
            layers = comp.layers
            for i in range(n - 1, -1, -1):
                fwd = layers[i]
                delta = comp.deltas[i]
                ng: dict[int, int] = {}
                kset = 0
                for key, bd in comp.bounds[i].items():
                    f = fwd[key]
                    acc = 0
                    kmin = bd & 15
                    nk = key - kmin * delta
                    for k in range(kmin, (bd >> 4) + 1):
                        b = g.get(nk)
                        if b:
                            b >>= k
                            acc |= b
                            if f & b:
                                kset |= 1 << k
                        nk -= delta
                    if acc:
                        ng[key] = acc
                g = ng
                ksets[i] = kset
        safe = mines = 0
        partial = []  # boxes holding, in some layout, some but not all of their cells' mines
        multi = []  # boxes of several possible counts: (position, mask, size)
        mid = []  # boxes of one possible count strictly between 0 and their size: (mask, count)
        for i, (m, s, kset) in enumerate(zip(comp.box_masks, comp.box_sizes, ksets)):
            if kset == 1:
                safe |= m
            elif kset == 1 << s:
                mines |= m
            else:
                if kset & ((1 << s) - 2):
                    partial.append(m)
                if kset & (kset - 1):
                    multi.append((i, m, s))
                else:
                    mid.append((m, kset.bit_length() - 1))
        self._found(ksets, safe, mines, partial, multi, mid)

    def _read(self, comp: _Comp, sols: list[int]) -> None:
        """The same, read off the allowed solutions ``sols``: only the boxes whose count differs
        between solutions (a field of their XOR with the first) are read per solution.

        Why: reading every box of every solution was most of a _Rest (~50k instructions for
        a component of 6 boxes and 4 solutions, one per new component and move); usually
        only two or three boxes vary."""
        first = sols[0]
        diff = 0
        for code in sols:
            diff |= code ^ first
        ksets = []
        safe = mines = 0
        partial = []
        multi = []
        mid = []
        sh = 8
        i = 0
        for m, s in zip(comp.box_masks, comp.box_sizes):
            if diff >> sh & 15:
                if s == 1:  # a lone cell that varies: empty in some layouts, a mine in others
                    kset = 3
                else:
                    kset = 0
                    for code in sols:
                        kset |= 1 << (code >> sh & 15)
                    if kset & ((1 << s) - 2):
                        partial.append(m)
                multi.append((i, m, s))
            else:
                k = first >> sh & 15
                kset = 1 << k
                if not k:
                    safe |= m
                elif k == s:
                    mines |= m
                else:
                    partial.append(m)
                    mid.append((m, k))
            ksets.append(kset)
            sh += 4
            i += 1
        self._found(ksets, safe, mines, partial, multi, mid)

    def _found(self, ksets: list[int], safe: int, mines: int, partial: list, multi: list, mid: list) -> None:
        """Keep what ``__init__`` or ``_read`` found; an empty list as the shared empty tuple
        (one object fewer for the room's reveal data to hold and touch)."""
        self.ksets = ksets
        self.safe = safe
        self.mines = mines
        self.partial = partial or ()
        self.multi = multi or ()
        self.mid = mid or ()

    def seen(self, w: int):
        """What the cells ``w`` of this component add to the number of a safe cell that sees
        them: ``_VARY`` if it varies with the component's mine count fixed (part of a box that
        may hold some but not all of its cells' mines is seen); an int if it is the same in
        every layout; else ``(const, varying)``: const plus, for each seen box of several
        possible counts, ``(position, row)``, row[k] being what it adds holding k mines."""
        memo = self._seen
        out = memo.get(w, memo)
        if out is not memo:
            return out
        out = const = (w & self.mines).bit_count()
        for m in self.partial:
            x = m & w
            if x and x != m:
                out = _VARY
                break
        else:
            for m, k in self.mid:  # seen whole (not in part: that varies)
                if m & w:
                    const += k
            varying = []
            for i, m, s in self.multi:
                x = m & w
                if x:
                    if x == m:
                        varying.append((i, tuple(range(s + 1))))
                    else:  # its possible counts are 0 and s only
                        varying.append((i, (0,) * s + (x.bit_count(),)))
            out = (const, tuple(varying)) if varying else const
        if len(memo) >= 32:
            memo.clear()
        memo[w] = out
        return out

    def func(self, comp: _Comp, w: int):
        """For ``seen(w) == (const, varying)``: what the varying boxes of ``comp`` (the
        component this restricts) add, per mine count m the component may hold, ``{m: count}``
        if each m fixes it, else ``_VARY``."""
        memo = self._func
        if memo is None:
            memo = self._func = {}
        out = memo.get(w, memo)
        if out is not memo:
            return out
        varying = self.seen(w)[1]
        allowed = self.allowed
        if len(comp.box_sizes) == 1:  # one box, seen whole
            out = {m: m for m in _bits(allowed)}
        elif comp.sols is not None:
            # as minmax, read off the solutions, stopping at the first two that differ
            items = [(8 + 4 * i, row) for i, row in varying]
            out = {}
            for code in comp.sols:
                m = code & 255
                if allowed >> m & 1:
                    v = 0
                    for sh, row in items:
                        v += row[code >> sh & 15]
                    old = out.get(m)
                    if old is None:
                        out[m] = v
                    elif old != v:
                        out = _VARY
                        break
        else:
            out = {}
            for m, (lo, hi) in comp.minmax(dict(varying)).items():
                if allowed >> m & 1:
                    if lo != hi:
                        out = _VARY
                        break
                    out[m] = lo
        if len(memo) >= 32:
            memo.clear()
        memo[w] = out
        return out
