"""The Spark session's own files: nothing written through a name another user can plant."""
from __future__ import annotations

import os
import stat
import tempfile

from spark_ingest import session


def test_the_log4j_configuration_is_a_file_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(session, "_log4j_path", None)
    # links planted where a fixed name would be written: neither target may change
    victims = [tmp_path / "victim-a", tmp_path / "victim-b"]
    for victim in victims:
        victim.write_text("keep")
    fixed = tmp_path / "binlog-spark-log4j2.properties"
    os.symlink(victims[0], fixed)
    os.symlink(victims[1], str(fixed) + ".tmp")

    path = session._quiet_log4j()

    assert [v.read_text() for v in victims] == ["keep", "keep"]
    assert os.path.dirname(path) == str(tmp_path) and not os.path.islink(path)
    assert open(path).read() == session._LOG4J
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert session._quiet_log4j() == path          # once per process
    session._remove(path)
