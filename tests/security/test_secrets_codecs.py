"""Secrets never leak, layer (b): many random games through the real codecs, no network.

Every frame the hub would send — msgpack and HTML, update and snapshot, for seat 0, seat 1 and
spectators, at every version of every game — plus the browser's selection frames is inspected
by :mod:`tests.security.leaks` against the referee's truth. Two tests: a hypothesis property
(shrinks a failure to a small seed) and a volume run on both cores.

``MINEDUEL_LEAK_GAMES`` scales the volume run (default 2000 games); the figures of each run
are written to ``test-artifacts/security/`` and quoted in docs/RELIABILITY.md.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT

from .games import Codecs, play
from .leaks import Inspector

VOLUME_GAMES = int(os.environ.get("MINEDUEL_LEAK_GAMES", "2000"))
CHUNK = 50
ARTIFACTS = ROOT / "test-artifacts" / "security"


def write_figures(name: str, figures: dict[str, int]) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"{name}.json").write_text(json.dumps(figures, indent=1, sort_keys=True))
    print(f"\n{name}: " + ", ".join(f"{k}={v}" for k, v in sorted(figures.items())))


@pytest.fixture(scope="module")
def tally():
    figures: Counter[str] = Counter()
    yield figures
    write_figures("codec_property", dict(figures))


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**63 - 1))
def test_random_games_through_both_codecs_leak_nothing(tally, seed):
    codecs, inspector, stats = CODECS, Inspector(), Counter()
    play(seed, codecs, inspector, stats)
    tally.update(stats)
    tally.update(inspector.counts)


CODECS = Codecs()


def _run_chunk(seeds: range) -> dict[str, int]:
    codecs, inspector, stats = Codecs(), Inspector(), Counter()
    for seed in seeds:
        play(seed, codecs, inspector, stats)
    stats.update(inspector.counts)
    return dict(stats)


@pytest.mark.volume
@pytest.mark.timeout(1800)  # ~90 s on an idle 2-core machine; a loaded one must not fail it
def test_thousands_of_games_through_both_codecs_on_both_cores():
    chunks = [range(start, min(start + CHUNK, VOLUME_GAMES)) for start in range(0, VOLUME_GAMES, CHUNK)]
    figures: Counter[str] = Counter()
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork")) as pool:
        for result in pool.map(_run_chunk, [range(1_000_000 + c.start, 1_000_000 + c.stop) for c in chunks]):
            figures.update(result)
    assert figures["games"] == VOLUME_GAMES
    assert figures["wrong_marks"] > VOLUME_GAMES and figures["re_marks"] > 0  # the secret was exercised
    assert figures["ended_all_mines"] and figures["ended_resignation"] and figures["ended_timeout"]
    write_figures("codec_volume", dict(figures))
