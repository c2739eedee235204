"""A real redis-server for the cluster tests that need only Redis (not the whole rig)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rig import RedisProcess, missing_programs


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if missing_programs():
        pytest.skip(f"{missing_programs()} not installed: run `make cluster-deps` (Debian)")
    server = RedisProcess(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
