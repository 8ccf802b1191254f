"""Writers declare what they take (``binlog.output.base.Writer``) and ``binlog dump`` wires
them by that declaration: rows, encoded rows and runs, statements, watermarks."""
from __future__ import annotations

import inspect
import io

import pytest

from binlog.output import base, cdc, debezium, extras, json_lines, routing, text
from binlog.output.base import Wrapping, Writer
from binlog.output.sql import literals, renderer, script, session
from binlog.replay.keys import KeyCatalog


def _writers() -> dict[str, Writer]:
    keys = KeyCatalog()
    return {
        "json_lines": json_lines.JsonLinesWriter(io.BytesIO()),
        "cdc": cdc.CdcJsonWriter(io.BytesIO(), keys=keys),
        "debezium": debezium.DebeziumWriter(io.BytesIO()),
        "text": text.TextWriter(io.BytesIO()),
        "sql": script.SqlWriter(io.BytesIO(), keys=keys),
        "flashback": script.SqlWriter(io.BytesIO(), keys=keys, flashback=True),
        "checksum_json": extras.ChecksumJsonWriter(io.BytesIO()),
        "split": extras.SplitUpdatesWriter(json_lines.JsonLinesWriter(io.BytesIO()), keys),
    }


# (statements, watermarks, row encoder, runs, rows hook): what each writer says it takes
TAKES = {
    "json_lines": (True, True, False, False, False),
    "cdc": (True, True, True, True, False),
    "debezium": (True, True, False, False, False),
    "text": (False, False, True, True, False),
    "sql": (False, False, True, False, True),
    "flashback": (False, False, True, False, False),
    "checksum_json": (True, True, False, False, False),
    "split": (True, True, False, False, False),
}


def _takes(writer: Writer) -> tuple:
    return (writer.takes_statements, writer.takes_watermarks, writer.row_encoder() is not None,
            writer.run_writer() is not None, writer.rows_hook() is not None)


@pytest.mark.parametrize("name", sorted(TAKES))
def test_each_writer_declares_what_it_takes(name):
    writer = _writers()[name]
    assert Writer in type(writer).__mro__      # declared, not only shaped alike
    assert _takes(writer) == TAKES[name]


def test_every_writer_class_is_a_writer_and_probes_nothing():
    """No writer answers for another by ``__getattr__``, nor probes one with hasattr."""
    modules = (cdc, debezium, json_lines, routing, script, renderer, literals, session, text, extras)
    found = [cls for m in modules for _, cls in inspect.getmembers(m, inspect.isclass)
             if cls.__module__ == m.__name__ and cls.__name__.endswith(("Writer", "Strings", "Db", "Files"))]
    assert {c.__name__ for c in found} >= {"CdcJsonWriter", "TextWriter", "SqlWriter", "DebeziumWriter",
                                           "JsonLinesWriter", "BigintsAsStrings", "RewriteDb",
                                           "PerTableFiles", "SplitUpdatesWriter", "ChecksumJsonWriter"}
    for cls in found:
        assert Writer in cls.__mro__, cls
        assert "__getattr__" not in vars(cls), cls
    for m in (*modules, base):
        assert "hasattr(" not in inspect.getsource(m).replace('hasattr(value, "as_json")', ""), m


def test_a_wrapper_forwards_everything_but_the_runs():
    inner = cdc.CdcJsonWriter(io.BytesIO(), keys=KeyCatalog())
    for wrapper in (routing.BigintsAsStrings(inner), routing.RewriteDb(inner, {"a": "b"})):
        assert Wrapping in type(wrapper).__mro__
        assert wrapper.takes_statements and wrapper.takes_watermarks
        assert wrapper.row_encoder() == inner.encode_rows     # the inner writer's batch path
        assert wrapper.run_writer() is None                    # runs would bypass the wrapper


def test_rewrite_db_gives_statements_only_to_a_writer_that_takes_them():
    plain = text.TextWriter(io.BytesIO())
    wrapper = routing.RewriteDb(plain, {"a": "b"})
    assert not wrapper.takes_statements
    wrapper.statement(object())       # not rewritten (that would read the record), not written


def test_a_writer_without_an_encoder_refuses_encoded_rows():
    with pytest.raises(TypeError, match="DebeziumWriter takes no encoded rows"):
        debezium.DebeziumWriter(io.BytesIO()).write_encoded(object())
