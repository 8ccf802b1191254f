"""Shared pytest fixtures.

Real-server fixtures (``mariadb_server``, ``mariadb_factory``, ``two_servers``) start a
private ``mariadbd`` on loopback from ``tests/support/mariadb_server.py``; every test that
uses one is marked ``server`` here. They are skipped (not failed) when no MariaDB server
binary is installed, unless ``BINLOG_REQUIRE_SERVER=1`` is set (then a missing server is
an error); so are the tests of the compiled extensions (the ``compiled`` fixture) without
them, unless ``BINLOG_REQUIRE_COMPILED=1``. The kinds of tests are markers, never folders (``pyproject.toml`` registers
them; docs/testing.md): ``server`` and ``spark`` are given by the fixtures a test uses
(``FIXTURE_KINDS``), and a module declares the others (``live``, ``fuzz``, ``slow``) in its
``pytestmark``. ``pytest -m "not server and not spark"`` runs what needs neither.
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


#: The tests that use a fixture get the marker of its kind: a test that starts a real server
#: (directly or through ``two_servers``: pytest counts the fixtures a fixture uses) cannot be
#: left out of ``server``, and one that uses the Spark session cannot be left out of ``spark``.
FIXTURE_KINDS = {"mariadb_server": "server", "mariadb_factory": "server", "spark": "spark", "peers": "peers"}

#: The replay helpers (``replay_helpers``, ``workers_helpers``: the CLI as a subprocess,
#: DSNs, scripts) serve the apply, verify, SQL-output and schema-store tests of several
#: folders; they live beside the replay tests.
_REPLAY_HELPERS = _TESTS / "binlog" / "replay"
if str(_REPLAY_HELPERS) not in sys.path:
    sys.path.insert(0, str(_REPLAY_HELPERS))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in FIXTURE_KINDS.keys() & set(getattr(item, "fixturenames", ())):
            item.add_marker(FIXTURE_KINDS[fixture])


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


@pytest.fixture(scope="session")
def peers() -> Callable[[str], Path]:
    """``peers("go-mysql-1.7.0")``: the build directory of a real peer (tests/peers/build.py),
    built into its cache on first use; skipped when it cannot be built, unless
    ``BINLOG_REQUIRE_PEERS=1``."""
    from support.peers import peer_dir

    return peer_dir


#: The TiDB peer (tests/peers/build.py PEERS) the TiDB fixtures run.
TIDB_PEER = "tidb-8.5"


@pytest.fixture
def tidb_factory(peers) -> Iterator[Callable[..., Any]]:
    """Factory: ``tidb = tidb_factory()`` (or ``tidb_factory({"performance":
    {"txn-total-size-limit": N}})``: TiDB config-file settings) gives a started, fresh
    ``tidb-server -store unistore`` on loopback (tests/support/tidb_server.py), root without
    a password at ``tidb.dsn``; each is stopped and removed at the end of the test.  Marked
    ``peers`` (it uses that fixture): the binary is the ``tidb-8.5`` peer."""
    from support.tidb_server import TiDBServer

    binary = peers(TIDB_PEER) / "tidb-server"
    made: list[TiDBServer] = []

    def make(config: Mapping[str, Any] | None = None, **kw: Any) -> TiDBServer:
        server = TiDBServer(binary, config, **kw)
        made.append(server)
        return server.start()

    try:
        yield make
    finally:
        for server in made:
            server.cleanup()


@pytest.fixture
def compiled() -> None:
    """The compiled extensions, built from their current sources: a test (or a module's
    ``pytestmark = pytest.mark.usefixtures("compiled")``) using it is skipped without them,
    unless ``BINLOG_REQUIRE_COMPILED=1`` (support/compiled.py)."""
    from support.compiled import require_compiled

    require_compiled()


@pytest.fixture
def two_servers(mariadb_factory):
    """(source, target): two fresh mariadbd on loopback; the source logs full row metadata."""
    source = mariadb_factory({"binlog_row_metadata": "FULL"})
    target = mariadb_factory({})
    return source, target
