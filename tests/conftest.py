"""Shared pytest fixtures.

Real-server fixtures (``mariadb_server``, ``mariadb_factory``) start a private ``mariadbd``
on loopback from ``tests/support/mariadb_server.py``. Tests using them must be marked
``@pytest.mark.server``; they are skipped (not failed) when no MariaDB server binary is
installed, unless ``BINLOG_REQUIRE_SERVER=1`` is set (then a missing server is an error).
Run only the tests without a server with ``pytest -m "not server"``; the other kinds
(``spark``, ``live``, ``fuzz``, ``slow``) are markers too (``MARKERS`` below).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import pytest

_TESTS = Path(__file__).resolve().parent
if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))

from support.mariadb_server import MariaDBServer, require_mariadbd  # noqa: E402

REPO_ROOT = _TESTS.parent
SAMPLES_DIR = REPO_ROOT / "samples"

#: Options of the shared session server.
SESSION_SERVER_OPTIONS: dict[str, Any] = {"binlog_row_metadata": "FULL"}


#: The kinds of tests, as markers (``pytest -m "not server and not spark"``).  ``server``
#: is also given to every test that uses a real-server fixture, and the folder kinds to
#: every test in that folder, so a test cannot be left out of its kind.
MARKERS = {
    "server": "needs a real mariadbd (started by the tests on loopback)",
    "spark": "tests/spark/: needs the [spark] extra (pyarrow; pyspark and Java 17 for the Spark engine)",
    "live": "tests/live/: a live server followed as a replica (binlog fetch, --from)",
    "fuzz": "tests/fuzz/: bounded fuzzing (hypothesis, the differential and names targets)",
    "slow": "takes more than a few seconds on its own",
}
FOLDER_KINDS = ("spark", "live", "fuzz")
SERVER_FIXTURES = frozenset({"mariadb_server", "mariadb_factory"})


def pytest_configure(config: pytest.Config) -> None:
    for name, meaning in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath)).resolve()
        if path.is_relative_to(_TESTS):
            folder = path.relative_to(_TESTS).parts[0]
            if folder in FOLDER_KINDS:
                item.add_marker(folder)
        if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker("server")


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[MariaDBServer]:
    """One shared server for the whole session (binlog_row_metadata=FULL, ROW format).

    Tests share it: create your own database (e.g. named after the test) and do not
    change global variables without restoring them.
    """
    require_mariadbd()
    with MariaDBServer(SESSION_SERVER_OPTIONS) as srv:
        yield srv


@pytest.fixture
def mariadb_factory() -> Iterator[Callable[..., MariaDBServer]]:
    """Factory: ``srv = mariadb_factory({"binlog_row_image": "MINIMAL"})`` gives a started,
    fresh server with those extra options; every server it made is stopped and removed
    at the end of the test."""
    require_mariadbd()
    made: list[MariaDBServer] = []

    def make(options: Mapping[str, Any] | None = None, **kw: Any) -> MariaDBServer:
        srv = MariaDBServer(options, **kw)
        made.append(srv)
        return srv.start()

    try:
        yield make
    finally:
        for srv in made:
            srv.cleanup()
