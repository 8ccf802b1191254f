"""The real peers for tests (tests/peers/build.py): ``peer_dir("go-mysql-1.7.0")`` gives the
directory of a peer's build, building it on first use.  A peer that cannot be built (its
toolchain missing) skips the test, unless ``BINLOG_REQUIRE_PEERS=1`` (make test sets it): then
it fails, as a missing server does under ``BINLOG_REQUIRE_SERVER=1``."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

_BUILD = Path(__file__).resolve().parents[1] / "peers" / "build.py"


def _builder():
    module = sys.modules.get("binlog_peers_build")
    if module is None:
        spec = importlib.util.spec_from_file_location("binlog_peers_build", _BUILD)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


def peer_names() -> list[str]:
    return sorted(_builder().PEERS)


def peer_dir(name: str) -> Path:
    """The build directory of the named peer (its binaries or jars inside)."""
    import pytest

    builder = _builder()
    try:
        return builder.build(name, progress=lambda m: print(m, file=sys.stderr, flush=True))
    except builder.PeerBuildError as exc:
        if os.environ.get("BINLOG_REQUIRE_PEERS") == "1":
            raise
        pytest.skip(f"peer {name} not built: {str(exc)[:500]}")


def build_peer(name: str) -> Path:
    """The peer's build directory, outside pytest (``make compat``): a peer that cannot be
    built raises ``PeerBuildError``."""
    return _builder().build(name, progress=lambda m: print(m, file=sys.stderr, flush=True))
