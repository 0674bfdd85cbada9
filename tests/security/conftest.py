"""Fixtures of the security tests (the shared ones are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import LiveServer, launch_server


@pytest.fixture(scope="module")
def make_server(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """Module-scoped servers with their own settings: ``make_server(**env) -> LiveServer``."""
    started: list[LiveServer] = []

    def make(**env: str) -> LiveServer:
        server = launch_server(redis_url, Path(tmp_path_factory.mktemp("sec")), **env)
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()
