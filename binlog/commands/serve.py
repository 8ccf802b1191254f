"""``binlog serve --listen HOST:PORT --binlogs DIR --server-id N --users FILE``: serve a
directory of binlogs over the MySQL replication protocol to replicas and CDC clients
that are not changed in any way (a MariaDB replica's CHANGE MASTER TO, go-mysql / DM,
Debezium, python-mysql-replication, ``mariadb-binlog --read-from-remote-server``).

The directory is followed as it grows (a relay ``binlog fetch --stop-never`` writes, the
output of ``binlog rewrite``): a blocking dump waits for new events at the end of the
last binlog, with heartbeats.  Positions, file names and sizes are the directory's own.

Nobody gets in without an account of the users file (``name *HASH`` lines, the
mysql_native_password hash ``--hash-password`` prints from a password read on standard
input); there is no anonymous default.  Each client is untrusted input: bounded packets,
deadlines on the login, idle commands and every send, a thread of its own.

SIGTERM or Ctrl-C: no new client, every session ended, exit 0.  Exit codes as every
command's (binlog/exitcodes.py): 2 bad usage (options, the users file, the address).
"""
from __future__ import annotations

import signal
import ssl
import sys
import time
from pathlib import Path

from ..errors import UsageError
from ..inert import escape
from ..options import build


def add_parser(sub) -> None:
    p = sub.add_parser("serve")
    build(p, "serve")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..protocol.server_side import native_hash

    if args.hash_password:
        password = sys.stdin.readline().rstrip("\n")
        if not password:
            raise UsageError("--hash-password: give the password on standard input")
        sys.stdout.write(native_hash(password) + "\n")
        return 0
    children = _children(args)
    server = build_server(args)
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: server.stop())
    for child in children:
        child.start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.stop()
        server._shutdown()
    finally:
        signal.signal(signal.SIGTERM, previous)
        for child in children:
            child.stop()
    return 0


def _children(args) -> list:
    """The fetch and rewrite children of --upstream / --relay; sets args.binlogs to
    what is served."""
    from ..serve.children import Child

    if args.relay is None:
        if args.rewritten:
            raise UsageError("--rewritten goes with --relay DIR")
        return []           # --upstream without --relay: its accounts only
    if args.binlogs:
        raise UsageError("give --binlogs DIR (served as it is) or --relay DIR (rewritten), not both")
    if args.server_id is None:
        raise UsageError("binlog serve needs --server-id")
    relay = Path(args.relay)
    rewritten = Path(args.rewritten or f"{relay.resolve()}.rewritten")
    if rewritten.resolve() == relay.resolve() or relay.resolve() in rewritten.resolve().parents:
        raise UsageError("--rewritten must be a directory of its own, outside --relay")
    relay.mkdir(parents=True, exist_ok=True)
    rewritten.mkdir(parents=True, exist_ok=True)
    args.binlogs = str(rewritten)
    children = []
    if args.upstream:
        dsn, password = _password_apart(args.upstream)
        children.append(Child("fetch", ["fetch", "--from", dsn, "--to", str(relay),
                                        "--server-id", str(args.server_id), "--stop-never"],
                              _log, secret=password))
    schema = [f"--schema-ddl={path}" for path in args.schema_ddl]
    schema += [f"--schema-store={args.schema_store}"] if args.schema_store else []
    schema += [f"--schema-from={args.schema_from}"] if args.schema_from else []
    metadata = ["--full-metadata"] if args.full_metadata else []
    children.append(Child("rewrite", ["rewrite", str(relay), "--to", str(rewritten), "--follow",
                                      "--quiet", *metadata, *schema], _log))
    return children


def build_server(args):
    from ..serve.server import Server, load_users
    from ..serve.session import Limits
    from ..sources.served import ServedLogs

    for name in ("binlogs", "server_id"):
        if getattr(args, name) is None:
            raise UsageError(f"binlog serve needs --{name.replace('_', '-')}")
    if args.users is None and args.upstream is None:
        raise UsageError("binlog serve needs --users FILE (or --upstream DSN, whose accounts "
                         "are then checked): nobody may log in without credentials")
    if not 1 <= args.server_id <= 0xFFFFFFFF:
        raise UsageError("--server-id must be 1..4294967295")
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--listen {args.listen}: expected HOST:PORT")
    limits = Limits(idle_timeout=args.idle_timeout, write_timeout=args.write_timeout)
    return Server(ServedLogs(args.binlogs), server_id=args.server_id, users=load_users(args.users),
                  listen=(host.strip("[]"), int(port)), limits=limits, max_clients=args.max_clients,
                  tls=_tls(args), log=_log, full_metadata=args.full_metadata,
                  upstream=_upstream_address(args.upstream),
                  relay=Path(args.relay) if args.relay else None, status_file=args.status)


def _password_apart(dsn: str) -> tuple[str, str | None]:
    """The upstream DSN for the fetch child's command line, without its password (read
    from a pipe instead: serve/children.py), and that password.  Built from the raw
    text, so the user name and host keep their own percent-encoding."""
    from urllib.parse import quote, urlsplit

    from ..serve.children import SECRET_FD
    from ..user_values import parse_dsn

    password = parse_dsn(dsn)["password"]       # also one from ?password_file=
    if not password:
        return dsn, None
    parts = urlsplit(dsn)
    userinfo, _, hostport = parts.netloc.rpartition("@")
    netloc = f"{userinfo.partition(':')[0]}@{hostport}" if userinfo else hostport
    query = "&".join(item for item in parts.query.split("&")
                     if item and not item.startswith("password_file="))
    query += ("&" if query else "") + "password_file=" + quote(f"/dev/fd/{SECRET_FD}", safe="/{}")
    return parts._replace(netloc=netloc, query=query).geturl(), password


def _upstream_address(dsn: str | None) -> dict | None:
    """Where --upstream is (host, port or socket, TLS): serve logs clients in there with
    their own user names and proofs, never with the DSN's user and password."""
    if dsn is None:
        return None
    from ..user_values import parse_dsn

    kw = parse_dsn(dsn)
    for name in ("user", "password", "database"):
        kw.pop(name, None)
    return kw


def _tls(args) -> ssl.SSLContext | None:
    if not args.tls_cert:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(args.tls_cert, args.tls_key)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"--tls-cert/--tls-key: {exc}") from None
    return context


def _log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    sys.stderr.write(f"{stamp} {escape(message)}\n")
    sys.stderr.flush()
