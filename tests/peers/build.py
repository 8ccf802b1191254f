#!/usr/bin/env python3
"""Builds the real peers the tests run against (go-mysql as TiDB DM configures it, Debezium's
MariaDB connector, TiDB, ...), pinned by the files under tests/peers/<name>/ (go.mod + go.sum,
a Maven pom), into a cache outside the checkout, once.

    python tests/peers/build.py all          # every peer (make peers)
    python tests/peers/build.py NAME...      # some; prints each one's directory

A peer's build directory is named after a hash of its input files and the toolchain's version,
so a new pin or a new toolchain builds anew and an unchanged one is reused.  The cache is
``$BINLOG_PEERS_CACHE`` or ``~/.cache/binlog-temporal/peers``; Go's module cache and Maven's
local repository are their own (``go env GOMODCACHE``, ``~/.m2``), so a rebuild downloads
nothing new.  Concurrent builds of one peer (two pytest processes) wait on a lock.

A peer is a ``Peer`` in ``PEERS`` (below): a kind (``go`` or ``maven``), its folder, and what its
build makes.  Tests find one through ``tests/support/peers.py`` (built on first use).
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


class PeerBuildError(RuntimeError):
    """A peer's toolchain is missing or its build failed (the message has the build's output)."""


@dataclass(frozen=True)
class Peer:
    name: str
    kind: str                       # "go": `go build` of packages; "maven": `mvn package`
    folder: str                     # under tests/peers/
    #: go: {output binary name: package path}; maven: {output name: path of the built file under target/}
    outputs: dict[str, str] = field(default_factory=dict)
    go_tags: str = ""               # go build -tags
    go_ldflags: str = ""            # go build -ldflags (version strings a peer reports)
    #: go: the subfolder whose go.mod and go.sum pin this build (one harness, several pinned
    #: versions: they are copied beside the harness before the build)
    gomod: str = ""
    env: dict[str, str] = field(default_factory=dict)   # extra build environment (GOTOOLCHAIN, JAVA_HOME...)
    note: str = ""                  # what it is, for --list and the docs

    @property
    def source(self) -> Path:
        return HERE / self.folder


#: Every peer, by name.  Each peer's folder holds its pins and its harness source.
PEERS: dict[str, Peer] = {peer.name: peer for peer in [
    # go-mysql as TiDB DM configures it (go-mysql/main.go): v1.7.0, the DM of the legacy
    # sources' era (tiflow v6.x), and the latest release the Go module proxy serves
    Peer("go-mysql-1.7.0", "go", "go-mysql", {"gomysql-peer": "."}, go_tags="gomysql_v1_7",
         gomod="v1.7.0", note="go-mysql v1.7.0 configured as TiDB DM configures it (file and network)"),
    Peer("go-mysql-1.16.0", "go", "go-mysql", {"gomysql-peer": "."}, gomod="v1.16.0",
         note="go-mysql v1.16.0 configured as TiDB DM configures it (file and network)"),
    Peer("debezium", "maven", "debezium", {"debezium-runner.jar": "target/debezium-runner.jar"},
         note="Debezium 3.5.0.Final's MariaDB connector in the embedded engine: change events as JSON lines"),
    Peer("tidb-8.5", "go", "tidb", outputs={"tidb-server": "github.com/pingcap/tidb/cmd/tidb-server"},
         # TiDB's Makefile builds with -tags codes and sets its version strings by -ldflags
         # (Makefile.common LDFLAGS); VERSION() then reads 8.0.11-TiDB-v8.5.4-e4e814fdc0af.
         go_tags="codes",
         go_ldflags=" ".join(f"-X github.com/pingcap/tidb/{var}={value}" for var, value in (
             ("pkg/parser/mysql.TiDBReleaseVersion", "v8.5.4-e4e814fdc0af"),
             ("pkg/util/versioninfo.TiDBGitHash", "e4e814fdc0afe9c3a6e5e96f129d83df802ab820"),
             ("pkg/util/versioninfo.TiDBGitBranch", "release-8.5"))),
         note="tidb-server (TiDB release-8.5 at e4e814fdc0af, 2025-11-26) from the Go module proxy; "
              "tests run it with -store unistore (tests/support/tidb_server.py)"),
    Peer("dm-8.5", "go", "dm", outputs={"dm-master": "github.com/pingcap/tiflow/cmd/dm-master",
                                        "dm-worker": "github.com/pingcap/tiflow/cmd/dm-worker",
                                        "dmctl": "github.com/pingcap/tiflow/cmd/dm-ctl"},
         # tiflow's Makefile (dm-master, dm-worker, dmctl targets): no build tags (the web UI
         # is the dm_webui tag, left out), version strings by -ldflags
         go_ldflags=" ".join(f"-X {var}={value}" for var, value in (
             ("github.com/pingcap/tiflow/pkg/version.ReleaseVersion", "v8.4.0-alpha-44-gdd2d54ad4c"),
             ("github.com/pingcap/tiflow/pkg/version.GitHash", "dd2d54ad4c196606d038da6686462cbfe1109894"),
             ("github.com/pingcap/tiflow/pkg/version.GitBranch", "master"),
             ("github.com/pingcap/tidb/pkg/parser/mysql.TiDBReleaseVersion", "v8.4.0-alpha-44-gdd2d54ad4c"))),
         note="DM (dm-master, dm-worker, dmctl) from pingcap/tiflow at dd2d54ad4c19 (2024-10-23, "
              "v8.5.0-alpha~2) from the Go module proxy; tests run it on loopback (tests/support/dm_cluster.py)"),
]}


def cache_root() -> Path:
    root = os.environ.get("BINLOG_PEERS_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "binlog-temporal" / "peers"


def _toolchain(peer: Peer) -> list[str]:
    tool = {"go": ["go", "version"], "maven": ["mvn", "-v"]}[peer.kind]
    if shutil.which(tool[0]) is None:
        raise PeerBuildError(f"{peer.name}: {tool[0]} is not installed (the {peer.kind} toolchain builds this peer)")
    return tool


def _fingerprint(peer: Peer) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in peer.source.rglob("*") if p.is_file() and "target" not in p.parts):
        digest.update(str(path.relative_to(peer.source)).encode() + b"\0" + path.read_bytes() + b"\0")
    version = subprocess.run(_toolchain(peer), capture_output=True, text=True, env=_env(peer))
    digest.update(version.stdout.encode())
    digest.update(repr(sorted(peer.env.items())).encode() + peer.go_tags.encode() + peer.go_ldflags.encode()
                  + repr(peer.outputs).encode())
    return digest.hexdigest()[:16]


def _env(peer: Peer) -> dict[str, str]:
    return dict(os.environ, **peer.env)


def _run(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> None:
    with open(log, "a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        done = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise PeerBuildError(f"{' '.join(cmd)} failed (exit {done.returncode}) in {cwd}:\n"
                             + log.read_text(errors="replace")[-6000:])


def _build_go(peer: Peer, work: Path, env: dict[str, str], log: Path) -> None:
    tags = ["-tags", peer.go_tags] if peer.go_tags else []
    tags += ["-ldflags", peer.go_ldflags] if peer.go_ldflags else []
    if peer.gomod:
        for pin in ("go.mod", "go.sum"):
            shutil.copy(work / "src" / peer.gomod / pin, work / "src" / pin)
    for binary, package in peer.outputs.items():
        # -mod=readonly: go.mod and go.sum are the pins; a build never changes them
        _run(["go", "build", "-mod=readonly", "-trimpath", *tags, "-o", str(work / binary), package],
             work / "src", env, log)


def _build_maven(peer: Peer, work: Path, env: dict[str, str], log: Path) -> None:
    _run(["mvn", "-B", "-q", "-e", "package", "-DskipTests"], work / "src", env, log)
    for name, built in peer.outputs.items():
        shutil.copy(work / "src" / built, work / name)


BUILDERS = {"go": _build_go, "maven": _build_maven}


def build(name: str, progress=None) -> Path:
    """The peer's build directory (its outputs inside), built now if it is not in the cache."""
    try:
        peer = PEERS[name]
    except KeyError:
        raise PeerBuildError(f"no peer named {name!r}; known: {', '.join(sorted(PEERS))}") from None
    root = cache_root()
    target = root / f"{peer.name}-{_fingerprint(peer)}"
    if (target / ".complete").exists():
        return target
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{peer.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".complete").exists():
            return target
        shutil.rmtree(target, ignore_errors=True)
        work = Path(f"{target}.building")
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(peer.source, work / "src", ignore=shutil.ignore_patterns("target"))
        log = work / "build.log"
        started = time.monotonic()
        if progress:
            progress(f"building peer {peer.name} into {target} (once; log: {log})")
        BUILDERS[peer.kind](peer, work, _env(peer), log)
        (work / ".complete").write_text(f"{time.monotonic() - started:.0f} s\n")
        os.rename(work, target)
        return target


def main(argv: list[str]) -> int:
    if argv == ["--list"]:
        for peer in PEERS.values():
            print(f"{peer.name}\t{peer.kind}\t{peer.note}")
        return 0
    names = sorted(PEERS) if argv in ([], ["all"]) else argv
    for name in names:
        try:
            print(build(name, progress=lambda m: print(m, file=sys.stderr, flush=True)))
        except PeerBuildError as exc:
            print(f"build.py: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
