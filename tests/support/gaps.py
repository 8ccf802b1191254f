"""Binlogs of a real mariadbd with one missing in the middle, shared by
the gap tests of the CLI commands and of ingest / the Spark data source."""
from __future__ import annotations

import shutil

from support.paths import write_index


def gap_chain(tmp_path_factory, values: tuple[int, ...], *, first: int = 1) -> dict:
    """Three binlogs from number ``first`` on, each holding one insert of ``values`` into
    g.t, copied three ways: ``full`` (all), ``gap`` (the middle one missing, the .index
    listing all three) and ``noindex`` (the middle one missing, no index).  Names and
    GTIDs come from the server (SHOW MASTER STATUS, @@gtid_binlog_pos after each insert)."""
    from support.mariadb_server import MariaDBServer

    srv = MariaDBServer({"binlog_row_metadata": "FULL"}).start()
    try:
        srv.execute("CREATE DATABASE g")
        srv.execute("CREATE TABLE g.t (id INT PRIMARY KEY)")
        while int(srv.master_status()[0].rsplit(".", 1)[1]) < first - 1:
            srv.flush_logs()
        names, gtids = [], []
        for value in values:
            srv.flush_logs()
            names.append(srv.master_status()[0])
            srv.execute(f"INSERT INTO g.t VALUES ({value})")
            gtids.append(srv.query("SELECT @@gtid_binlog_pos")[0][0])
        srv.flush_logs()
        full = tmp_path_factory.mktemp("full")
        for name in names:
            srv.copy_binlog(name, full / name)
    finally:
        srv.cleanup()
    gap = tmp_path_factory.mktemp("gap")             # the index lists all three
    noindex = tmp_path_factory.mktemp("noindex")     # numbered files, no index
    for name in (names[0], names[2]):
        shutil.copy(full / name, gap / name)
        shutil.copy(full / name, noindex / name)
    write_index(gap, names)
    return {"names": names, "gtids": gtids, "full": full, "gap": gap, "noindex": noindex}
