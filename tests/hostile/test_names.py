"""Hypothesis over attacker-chosen names and statement text: for any
database, table and column names, DDL text and string value, ``--format sql`` holds no
command the ``mariadb`` client would run, and ingest's output paths stay under --to.
Same target as the atheris harness's names inputs (fuzz/names.py)."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "fuzz"))

pytest.importorskip("pyarrow")

import names  # noqa: E402

pytestmark = pytest.mark.fuzz

_TMP = Path(tempfile.mkdtemp(prefix="binlog-names-"))
# the characters that matter to a client, a shell or a path, and any others
_hostile = st.sampled_from(list(b"\\!`'\"\n\r\x00\x01\x1a;#-/*.~%@ ") + [0xc3, 0xa9, 0xff])
_field = st.lists(st.one_of(_hostile, st.integers(0, 253)), max_size=40).map(bytes)
_words = st.lists(st.sampled_from([b"--\x01 '", b"\n", b"\\! touch /tmp/pwned", b"system ls", b"\\. f",
                                   b"'", b"`", b'"', b"/*!*/;", b";", b"-- c", b"DELIMITER //", b"#",
                                   b"/*", b"*/", b"USE x", b"a"]), max_size=12).map(b"".join)


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(db=_field, table=_field, column=_field, ddl=st.one_of(_words, _field), value=st.one_of(_words, _field))
@example(db=b"..", table=b"/../../x", column=b"`", ddl=b"t (a INT) --\x01 '\nCOMMENT '\n\\! touch /tmp/p\n' --\x01 '",
         value=b"\\! x")
@example(db=b"a.b", table=b"c\n\\! id", column=b"c", ddl=b"t (a INT) -- trailing", value=b"")
def test_hostile_names_and_text_stay_inert(db, table, column, ddl, value):
    fields = [f.replace(b"\xfe", b"") for f in (db, table, column, ddl, value)]
    names.run_names(b"\xfe".join(fields), _TMP)


def test_the_client_model_sees_the_attacks():
    """client_commands finds what the real client ran (tests/binlog/output/test_sql_hostile.py)."""
    script = (b"CREATE TABLE t1 (a INT) --\x01 '\nCOMMENT '\n\\! touch x\n' --\x01 ';\n"
              b"system ls;\nSELECT '\\\\!';\nUSE `a`;\nUSE`a`;\n")
    assert names.client_commands(script) == ["\\!", "system", "use"]


def test_two_columns_with_one_name_are_an_error_not_a_lost_value(tmp_path):
    """Found by the names target: a TABLE_MAP naming two columns `id` made one row value
    replace the other (JSON) and a ValueError in --format sql."""
    from binlog.errors import MalformedEventError
    from binlog.reader import BinlogReader

    path = tmp_path / "dup.binlog"
    path.write_bytes(names.build(b"shop", b"orders", b"id", b"t (a INT)", b"plain"))
    with pytest.raises(MalformedEventError, match="two columns are named 'id'"):
        list(BinlogReader([path]).changes())


@pytest.mark.parametrize("path", sorted((Path(__file__).parent / "names_regressions").glob("*.bin")),
                         ids=lambda p: p.name)
def test_names_regressions(path):
    """Inputs the atheris names target failed on (option byte included)."""
    data = path.read_bytes()
    names.run_names(data[1:], _TMP)
