"""No message of any command shows a DSN's password: malformed DSNs,
unknown schemes and refused connections, through the real command line."""
from __future__ import annotations

import socket

import pytest
from support.paths import REPO

from binlog.cli import main

SAMPLE = REPO / "samples" / "mariadb-10.11" / "types_full.binlog"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]          # closed again when the block ends: refused


@pytest.mark.parametrize("dsn", ["postgres://u:s3cr3t@h/", "mysql:u:s3cr3t@h", "mysql://u:s3/cr3t@h/db",
                                 "mysql://root:s3cr3t", "mysql://u:s3cr3t@[::1/",
                                 "mysql://u:s3cr3t@127.0.0.1:{port}/db"])
@pytest.mark.parametrize("command", [["dump", "--schema-from"], ["apply", "--to"],
                                     ["verify-rows", "--against"]])
def test_no_command_prints_the_password(command, dsn, capsys):
    dsn = dsn.format(port=_closed_port())
    code = main([*command, dsn, str(SAMPLE)])
    out, err = capsys.readouterr()
    assert code != 0
    assert "cr3t" not in out + err and "Traceback" not in err, err
