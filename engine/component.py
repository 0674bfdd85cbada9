"""The auto-reveal's component solver, for ``engine.reveal_cache``: which mine counts a
component of the frontier may hold, box by box (a box: cells touched by the same constraints).

A component is a set of reduced constraints ``(need, mask)`` linked by shared cells.
:class:`_Comp` solves one from its constraints; :func:`_derive` makes one from the components
of the position before it (what a move changed: a cell gone, a constraint added).
``comp.rest(allowed)`` restricts one to the mine counts the rest of the board allows
(``engine.restriction``).  See ``docs/ENGINE.md`` ("The incremental auto-reveal"), steps 3
and 4.  Pure: no I/O, no clock, no global state.
"""

from __future__ import annotations

from .restriction import _Rest


def _sweep(adj: list[int], start: int) -> list[int]:
    """Breadth-first order of the constraints linked to ``start`` (``adj[c]``: bitmask of the
    constraints sharing a cell with c)."""
    order = [start]
    seen = 1 << start
    for c in order:
        todo = adj[c] & ~seen
        seen |= todo
        while todo:
            low = todo & -todo
            order.append(low.bit_length() - 1)
            todo ^= low
    return order


_SOLUTIONS = 128  # a component with more partial solutions than this in a step: bitset pass
# (128, not 64: the bitset pass and its min-max reads cost more than carrying up to 128 packed
# solutions; 3% less auto-reveal per explore move interleaved over 500 games, a game's cache no
# larger: bench/reveal.py --interleave 500, docs/PERFORMANCE.md, twenty-first session)
_CS3 = [[c for c in range(3) if sig >> c & 1] for sig in range(8)]  # constraints of a signature


class _Comp:
    """One component's constraints ``cons`` (sorted (need, mask) pairs), solved exactly:
    boxes (cells touched by the same constraints, interchangeable) and a forward pass over
    them box by box, whose states pack what each constraint still needs (4 bits a constraint,
    as ``deduce._Component``).  Box order: with more than three constraints, the boxes as their
    first constraint comes in a breadth-first sweep from an end of the component (Cuthill-McKee,
    as ``deduce._components``); with three or fewer any order keeps the states few.

    Most components have a handful of solutions (box by box mine counts), so the pass carries
    the solutions themselves, each packed in one int: its mine count in the low 8 bits, box
    i's count at bit 8 + 4i (``sols``).  Everything else is read off them.  If a step would
    hold more than ``limit`` partial solutions, the pass carries instead a bitset of the mine
    counts so far per state (``layers``, ``bounds``, ``deltas``), and ``_Rest`` runs a backward
    pass over it.  A lone constraint needs neither (``sols`` and ``layers`` None).
    ``feasible``: the component's possible mine counts.  ``rest(allowed)``: the boxes'
    possible counts when it may hold only the counts in ``allowed`` (memoised: the latest in
    ``last``, others in a dict made only when a second one is asked for; most components are
    only ever asked for one, and an auto-reveal under load finds them gone cold since the
    room's last move, so that one is read off the component itself)."""

    __slots__ = ("_rests", "bounds", "last", "box_masks", "box_sizes", "cons", "deltas", "feasible", "layers", "mask",
                 "needs0", "sols")

    def __init__(self, cons: tuple, limit: int | None = None) -> None:
        self.cons = cons
        self._rests: dict[int, _Rest] | None = None
        self.last: _Rest | None = None
        self.layers = self.bounds = self.deltas = self.sols = None
        if len(cons) == 1:  # one number's cells: need n of them
            need, mask = cons[0]
            self.mask = mask
            self.box_masks = (mask,)
            self.box_sizes = (mask.bit_count(),)
            self.needs0 = need
            self.feasible = 1 << need
            return
        if len(cons) == 2 and limit is None:
            self._pair(cons)
            return
        # Boxes, by splitting the cells with each constraint in turn: (mask, signature).
        boxes: list[tuple[int, int]] = []
        union = 0
        bit = 1
        for _, m in cons:
            split = []
            for bm, sig in boxes:
                inside = bm & m
                if inside:
                    split.append((inside, sig | bit))
                    if inside != bm:
                        split.append((bm ^ inside, sig))
                else:
                    split.append((bm, sig))
            fresh = m & ~union
            if fresh:
                split.append((fresh, bit))
            union |= m
            boxes = split
            bit <<= 1
        self.mask = union
        ncons = len(cons)
        if ncons > 3:
            box_cs = []
            adj = [0] * ncons
            cons_boxes: list[list[int]] = [[] for _ in range(ncons)]
            for bi, (_, sig) in enumerate(boxes):
                cs = []
                x = sig
                while x:
                    low = x & -x
                    c = low.bit_length() - 1
                    cs.append(c)
                    cons_boxes[c].append(bi)
                    adj[c] |= sig
                    x ^= low
                box_cs.append(cs)
            seq = []
            placed = 0
            for c in _sweep(adj, _sweep(adj, 0)[-1]):
                for bi in cons_boxes[c]:
                    if not placed >> bi & 1:
                        placed |= 1 << bi
                        seq.append(bi)
        else:
            box_cs = [_CS3[sig] for _, sig in boxes]
            seq = range(len(boxes))
        needs0 = 0
        cap = []
        sh = 0
        for need, m in cons:
            needs0 |= need << sh
            cap.append(m.bit_count())
            sh += 4
        self.needs0 = needs0
        # Each step: box size, delta (one per constraint of the box), and per constraint of
        # the box (its shift, its cells in the boxes after this one).
        masks = []
        steps = []
        for bi in seq:
            bm = boxes[bi][0]
            s = bm.bit_count()
            masks.append(bm)
            delta = 0
            checks = []
            for c in box_cs[bi]:
                cap[c] -= s
                checks.append((4 * c, cap[c]))
                delta |= 1 << (4 * c)
            steps.append((s, delta, checks))
        self.box_masks = tuple(masks)
        self.box_sizes = tuple(step[0] for step in steps)
        if limit is None:
            limit = _SOLUTIONS
        sols = _solutions(needs0, steps, limit) if union.bit_count() < 256 else None
        if sols is not None:
            if not sols:
                raise ValueError("no consistent layout")
            feasible = 0
            for code in sols:
                feasible |= 1 << (code & 255)
            self.sols = sols
            self.feasible = feasible
            return
        cur = {needs0: 1}
        layers = [cur]
        bounds = []
        deltas = []
        for s, delta, checks in steps:
            nxt: dict[int, int] = {}
            bd: dict[int, int] = {}
            get = nxt.get
            for key, val in cur.items():
                kmin = 0
                kmax = s
                for sh, cp in checks:
                    v = key >> sh & 15
                    if v < kmax:
                        kmax = v
                    v -= cp
                    if v > kmin:
                        kmin = v
                if kmin > kmax:
                    continue
                bd[key] = kmin | kmax << 4
                nk = key - kmin * delta
                for k in range(kmin, kmax + 1):
                    nxt[nk] = get(nk, 0) | val << k
                    nk -= delta
            bounds.append(bd)
            deltas.append(delta)
            layers.append(nxt)
            cur = nxt
        feasible = cur.get(0, 0)
        if not feasible:
            raise ValueError("no consistent layout")
        self.layers = layers
        self.bounds = bounds
        self.deltas = deltas
        self.feasible = feasible

    def _pair(self, cons: tuple) -> None:
        """Two constraints (they share cells): the shared box takes k mines, each one's own
        cells the rest of its need, for every k that fits; the solutions packed as usual."""
        (n0, m0), (n1, m1) = cons
        shared = m0 & m1
        own0 = m0 ^ shared
        own1 = m1 ^ shared
        s = shared.bit_count()
        s0 = own0.bit_count()
        s1 = own1.bit_count()
        self.mask = m0 | m1
        masks = [shared]
        if own0:
            masks.append(own0)
        if own1:
            masks.append(own1)
        self.box_masks = tuple(masks)
        self.box_sizes = tuple(m.bit_count() for m in masks)
        self.needs0 = n0 | n1 << 4
        sols = []
        for k in range(max(0, n0 - s0, n1 - s1), min(s, n0, n1) + 1):
            k0 = n0 - k
            k1 = n1 - k
            code = (k + k0 + k1) | k << 8
            if own0:
                code |= k0 << 12
            if own1:
                code |= k1 << (16 if own0 else 12)
            sols.append(code)
        if not sols:
            raise ValueError("no consistent layout")
        feasible = 0
        for code in sols:
            feasible |= 1 << (code & 255)
        self.sols = sols
        self.feasible = feasible

    def rest(self, allowed: int) -> _Rest:
        r = self.last
        if r is not None:
            if r.allowed == allowed:
                return r
            rests = self._rests
            if rests is None:
                rests = self._rests = {r.allowed: r}
            r = rests.get(allowed)
            if r is None:
                if len(rests) >= 16:
                    rests.clear()
                r = rests[allowed] = _Rest(self, allowed)
        else:
            r = _Rest(self, allowed)
        self.last = r
        return r

    def minmax(self, contrib: dict[int, list[int]]) -> dict[int, tuple[int, int]]:
        """Per mine count m of the component: (min, max) over its layouts of the sum of
        ``contrib[b][k]`` (box b, by its position in the order, holding k mines)."""
        if self.sols is not None:
            out: dict[int, tuple[int, int]] = {}
            items = [(8 + 4 * i, row) for i, row in contrib.items()]
            for code in self.sols:
                v = 0
                for sh, row in items:
                    v += row[code >> sh & 15]
                m = code & 255
                old = out.get(m)
                if old is None:
                    out[m] = (v, v)
                elif v < old[0]:
                    out[m] = (v, old[1])
                elif v > old[1]:
                    out[m] = (old[0], v)
            return out
        # The forward pass with each state packed in one int, needs << 8 | mines so far, and its
        # (min, max) as min | max << 8 (a cell's number is at most 8, a component's mines at most
        # the board's): no tuple made or hashed per step, which was most of this pass's cost.
        states = {self.needs0 << 8: 0}
        for i, bd in enumerate(self.bounds):
            cb = contrib.get(i)
            step = 1 - (self.deltas[i] << 8)  # one more mine in box i: needs less delta, mines + 1
            new: dict[int, int] = {}
            for state, span in states.items():
                b = bd.get(state >> 8)
                if b is None:
                    continue
                k = b & 15
                nstate = state + k * step
                for k in range(k, (b >> 4) + 1):
                    nspan = span
                    if cb is not None:
                        d = cb[k]
                        nspan += d | d << 8
                    old = new.get(nstate)
                    if old is None:
                        new[nstate] = nspan
                    elif old != nspan:
                        lo = old & 255
                        hi = old >> 8
                        if nspan & 255 < lo:
                            lo = nspan & 255
                        if nspan >> 8 > hi:
                            hi = nspan >> 8
                        new[nstate] = lo | hi << 8
                    nstate += step
            states = new
        return {state & 255: (span & 255, span >> 8) for state, span in states.items() if state >> 8 == 0}


def _solutions(needs0: int, steps: list, limit: int) -> list[int] | None:
    """The forward pass carrying solutions (see :class:`_Comp`): every assignment of mine
    counts to the boxes that meets the constraints, packed; None past ``limit`` in a step."""
    cur = {needs0: [0]}
    w1 = (1 << 8) + 1  # one more mine in box i: count + 1, box field + 1
    for s, delta, checks in steps:
        nxt: dict[int, list[int]] = {}
        get = nxt.get
        n = 0
        one = checks[0] if len(checks) == 1 else None
        for key, codes in cur.items():
            if one is not None:
                sh, cp = one
                v = key >> sh & 15
                kmax = v if v < s else s
                kmin = v - cp if v > cp else 0
            else:
                kmin = 0
                kmax = s
                for sh, cp in checks:
                    v = key >> sh & 15
                    if v < kmax:
                        kmax = v
                    v -= cp
                    if v > kmin:
                        kmin = v
            if kmin > kmax:
                continue
            nk = key - kmin * delta
            add = kmin * w1
            if len(codes) == 1:
                c = codes[0] + add
                n += kmax - kmin + 1
                for _ in range(kmin, kmax + 1):
                    lst = get(nk)
                    if lst is None:
                        nxt[nk] = [c]
                    else:
                        lst.append(c)
                    nk -= delta
                    c += w1
            else:
                n += (kmax - kmin + 1) * len(codes)
                for _ in range(kmin, kmax + 1):
                    lst = get(nk)
                    if lst is None:
                        nxt[nk] = [c + add for c in codes]
                    else:
                        lst += [c + add for c in codes]
                    nk -= delta
                    add += w1
        if n > limit:
            return None
        cur = nxt
        w1 = ((w1 - 1) << 4) + 1
    return cur.get(0, [])


def _derive(olds: list[_Comp], cons: tuple, unknown: int, mines: int) -> _Comp | None:
    """The component of the constraints ``cons``, from the parent's components ``olds`` (all
    of whose cells still unknown lie in it) instead of solving it from scratch; ``None`` if
    that is not possible here (an old component without its solutions, or too many).

    Why: a move changes a component by a cell or a constraint or two, but solving it again
    from its constraints costs with its size (120k instructions for three constraints, 600k
    for eight: most of the auto-reveal's component work per explore move); deriving costs
    with the handful of solutions it has.

    Exact because every solution of the new constraints restricted to an old component's
    constraints is a solution of those (with the cells gone since fixed: safe, or a mine in
    ``mines``), so the new solutions are among the products of the old ones, reduced by the
    gone cells, then split by each constraint of ``cons`` that is neither an old one nor an
    old one reduced by the gone cells (those hold in every such product already: a box lies
    wholly inside or outside each constraint of its component, and loses its gone cells and
    their mines from both); each constraint applied keeps exactly the splits that meet it.
    Why the reduced ones are left out: they were two thirds of the constraints applied, each
    a pass over the boxes and the solutions that kept every solution.
    Boxes may come out finer than ``_Comp`` would make them: still sets of interchangeable
    cells, which is all the verdicts assume.
    """
    masks: list[int] = []
    sizes: list[int] = []
    sols = [0]
    known = set()
    gone_all = ~unknown
    union = 0  # the cells left in the boxes (a component's mask is the union of its boxes')
    for comp in olds:
        for c in comp.cons:  # the old constraints, and each as the gone cells reduce it
            known.add(c)
            gone = c[1] & gone_all
            if gone:
                known.add((c[0] - (gone & mines).bit_count(), c[1] ^ gone))
        csols = comp.sols
        if csols is None:
            if comp.layers is not None:
                return None
            csols = [comp.needs0 | comp.needs0 << 8]  # one constraint: one box, holding its need
        base = len(masks)
        masks += comp.box_masks
        sizes += comp.box_sizes
        gone_here = comp.mask & gone_all
        union |= comp.mask ^ gone_here
        i = base
        while gone_here:  # the boxes with cells gone: reduced, and the solutions with them
            bm = masks[i]
            gone = bm & gone_here
            if gone:
                gone_here ^= gone
                gm = (gone & mines).bit_count()
                keep = bm ^ gone
                size = keep.bit_count()
                sh = 8 + 4 * (i - base)
                out = []
                for code in csols:
                    k = (code >> sh & 15) - gm
                    if 0 <= k <= size:
                        out.append(code - (gm << sh) - gm)
                csols = out
                masks[i] = keep
                sizes[i] = size
            i += 1
        if not base:
            sols = csols
        else:  # the product: mine counts added, this component's boxes after the others'
            sh = 8 + 4 * base
            adds = [(b & 255) + ((b >> 8) << sh) for b in csols]
            sols = [a + b for a in sols for b in adds]
        if not sols or len(sols) > _SOLUTIONS:
            return None
    for need, m in cons:
        if (need, m) in known:
            continue
        # split the boxes by m: those inside count toward need, those cut in two get the
        # part inside as a new box; the cells of m in no box yet are one new box
        # the fields of the boxes inside m: their mines are (code & whole) % 15, the sum of
        # those fields (16 is 1 modulo 15, and m has at most 8 cells, so the sum is under 15)
        whole = 0
        cut = []  # (shift of the box, shift of its new inside part, inside size, outside size)
        for i in range(len(masks)):
            bm = masks[i]
            inside = bm & m
            if inside:
                if inside == bm:
                    whole |= 15 << (8 + 4 * i)
                else:
                    a = inside.bit_count()
                    cut.append((8 + 4 * i, 8 + 4 * len(masks), a, sizes[i] - a))
                    masks[i] = bm ^ inside
                    sizes[i] -= a
                    masks.append(inside)
                    sizes.append(a)
        fresh = m & ~union
        fs = fresh.bit_count()
        if fresh:
            fsh = 8 + 4 * len(masks)
            masks.append(fresh)
            sizes.append(fs)
            union |= fresh
        if not cut and not fresh:  # the constraint only keeps the solutions that meet it
            sols = [code for code in sols if (code & whole) % 15 == need]
            if not sols:
                return None
            continue
        out = []
        for code in sols:
            t = need - (code & whole) % 15
            if t < 0:
                continue
            if not cut:
                if t <= fs:
                    out.append(code + t + (t << fsh))
                continue
            partial = [(code, t)]
            for sh, nsh, a, b in cut:
                nxt = []
                for c, left in partial:
                    k = c >> sh & 15
                    lo = k - b if k > b else 0
                    hi = a if a < k else k
                    if hi > left:
                        hi = left
                    for x in range(lo, hi + 1):
                        nxt.append((c - (x << sh) + (x << nsh), left - x))
                partial = nxt
            for c, left in partial:
                if left == 0:
                    out.append(c)
                elif fresh and left <= fs:
                    out.append(c + left + (left << fsh))
        sols = out
        if not sols or len(sols) > _SOLUTIONS:
            return None
    if 0 in sizes:  # boxes whose cells are all gone: their fields (0 in every solution) dropped
        for j in range(len(sizes) - 1, -1, -1):
            if not sizes[j]:
                low = (1 << (8 + 4 * j)) - 1
                sols = [(c & low) | (c >> 4 & ~low) for c in sols]
                del masks[j], sizes[j]
    comp = _Comp.__new__(_Comp)
    comp.cons = cons
    comp._rests = comp.last = None
    comp.layers = comp.bounds = comp.deltas = None
    comp.mask = union
    comp.box_masks = tuple(masks)
    comp.box_sizes = tuple(sizes)
    comp.needs0 = None
    feasible = 0
    for code in sols:
        feasible |= 1 << (code & 255)
    comp.sols = sols
    comp.feasible = feasible
    return comp
