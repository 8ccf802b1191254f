"""A replayed DDL creates on TiDB what it created on the source: the collations the
source gave by default made explicit where TiDB's defaults are others, as TiDB DM does
with ``collation_compatible: strict`` (tiflow dm/syncer/ddl.go ``adjustCollation``).

The text is never re-rendered: on the statement's tokens (schema_store.lexer, which
gives their places), only a clause is inserted after a token or a collation name
replaced:

- ``CREATE DATABASE`` without CHARACTER SET or COLLATE: `` COLLATE <collation_server>``
  after its last token (MariaDB gives it the server's collation, the QUERY event's
  Q_CHARSET_CODE; TiDB would give its own default);
- a CHARACTER SET without a COLLATE in the same definition (a column's, the table's
  options, a database's, ``CONVERT TO``): `` COLLATE <MariaDB's default of it>`` after the
  charset's name, where TiDB's default of that charset is another (utf8mb4, utf8, latin1
  and ascii: ``_bin`` on TiDB, ``_general_ci`` / ``_swedish_ci`` on MariaDB;
  schema_store.model.DEFAULT_COLLATIONS).  With the BINARY attribute both take the
  charset's ``_bin``: nothing to add;
- NCHAR / NATIONAL CHAR / NVARCHAR columns (utf8mb3, utf8mb3_general_ci on MariaDB; the
  table's charset on TiDB): `` CHARACTER SET utf8 COLLATE utf8_general_ci`` after the type,
  unless the column names its collation;
- every collation this names or the statement names (``COLLATE x``) must be one TiDB has,
  or one ``--map-collation`` maps (its name is then replaced): else the run stops naming
  it.  A character set TiDB lacks is left for TiDB to refuse (error 1115).

Charsets inside expressions (``CAST(x AS CHAR CHARACTER SET y)``, ``CONVERT(x USING y)``,
a view's SELECT) keep TiDB's defaults (docs/replay.md, TiDB).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schema_store.lexer import Token, tokenize
from schema_store.model import DEFAULT_COLLATIONS, normalize_charset

from ...charsets import collation_name
from ...errors import TargetError
from .collations import CHARSETS, DEFAULTS, CollationMap, tidb_charset, tidb_name

NATIONAL = frozenset({"NATIONAL", "NCHAR", "NVARCHAR"})
_TYPE_WORDS = frozenset({"NATIONAL", "NCHAR", "NVARCHAR", "CHAR", "CHARACTER", "VARCHAR", "VARYING"})
#: Where a CREATE TABLE's options end.
_OPTIONS_END = frozenset({"PARTITION", "SELECT", "AS", "WITH", "IGNORE", "REPLACE"})
#: ALTER TABLE ... ADD of something else than a column.
_ADD_OTHER = frozenset({"INDEX", "KEY", "UNIQUE", "PRIMARY", "FULLTEXT", "SPATIAL", "FOREIGN",
                        "CONSTRAINT", "PARTITION", "CHECK", "PERIOD", "SYSTEM"})


@dataclass
class _Scope:
    """One definition: its tokens' indexes (at its own depth and deeper), the depth, and
    where its type is (columns; -1 for options)."""
    indexes: list[int]
    depth: int
    type_at: int = -1


@dataclass
class _Edits:
    """The changes to a DDL's text, and the collations --map-collation replaced."""
    collations: CollationMap
    session: Any                        # its SessionContext (events.status_vars)
    inserts: list[tuple[int, str]] = field(default_factory=list)
    replaces: list[tuple[int, int, str]] = field(default_factory=list)
    mapped: list[str] = field(default_factory=list)

    def apply(self, text: str) -> str:
        changes = [(start, end, new) for start, end, new in self.replaces]
        changes += [(pos, pos, new) for pos, new in self.inserts]
        for start, end, new in sorted(changes, key=lambda c: c[0], reverse=True):
            text = text[:start] + new + text[end:]
        return text

    def tidb(self, collation: str, what: str) -> str:
        """TiDB's collation for a source collation, or the stop naming it."""
        found = self.collations.get(collation)
        if found is None:
            charset = tidb_charset(collation.partition("_")[0])
            instead = DEFAULTS.get(charset, "a TiDB collation of that character set")
            raise TargetError(f"TiDB has no collation {collation} ({what}); TiDB's {charset} "
                              f"has {instead}, which compares otherwise",
                              f"--map-collation {collation}={instead} creates it with {instead} "
                              f"instead (comparisons and unique keys then follow {instead}); or "
                              f"create it on TiDB yourself and run past this statement with "
                              f"--no-ddl, or leave it out with --exclude-table")
        if self.collations.mapped(collation):
            self.mapped.append(f"{tidb_name(collation)} as {found}")
        return found

    def default_of(self, charset: str, after: Token) -> None:
        """A CHARACTER SET without a COLLATE: MariaDB's default collation made explicit."""
        charset = normalize_charset(charset) or ""
        if tidb_charset(charset) not in CHARSETS:
            return                      # TiDB refuses the charset itself (1115)
        source = tidb_name(DEFAULT_COLLATIONS.get(charset, f"{charset}_general_ci"))
        if DEFAULTS.get(tidb_charset(charset)) == source:
            return
        self._known_defaults()
        name = self.tidb(source, f"MariaDB's default collation of CHARACTER SET {charset}")
        self.inserts.append((after.end, f" COLLATE {name}"))

    def _known_defaults(self) -> None:
        code = self.session.unknown_code
        if code is not None:
            raise TargetError(f"the source logged a session setting this tool does not read "
                              f"(status var {code}), which may change the default collations of "
                              f"character sets (MariaDB 11.2+ character_set_collations)",
                              "name the collations in the statement, or create the table on TiDB "
                              "yourself and run past this statement with --no-ddl")


def translate(statement, collations: CollationMap) -> tuple[str, list[str]]:
    """The DDL's text for TiDB, and the collations ``--map-collation`` replaced in it."""
    text = statement.query
    toks = tokenize(text, keep_markers=False)
    depth = _depths(toks)
    edits = _Edits(collations, statement.event.session())
    for k, tok in enumerate(toks):
        if tok.is_word("COLLATE"):
            _explicit(edits, toks, k)
    for scope in _scopes(toks, depth):
        _scope(edits, toks, depth, scope)
    if _creates_database(toks) and not any(t.is_word("CHARACTER", "CHARSET", "COLLATE") for t in toks):
        _server_collation(edits, toks)
    return edits.apply(text), edits.mapped


def _depths(toks: list[Token]) -> list[int]:
    """The nesting depth of each token (a parenthesis has the depth outside it)."""
    out, level = [], 0
    for tok in toks:
        if tok.kind == "punct" and tok.value == ")":
            level = max(level - 1, 0)
        out.append(level)
        if tok.kind == "punct" and tok.value == "(":
            level += 1
    return out


def _value(toks: list[Token], k: int) -> int | None:
    """The index of the name after ``COLLATE`` / ``CHARACTER SET`` at ``k`` (``=`` skipped)."""
    k += 1
    if k < len(toks) and toks[k].kind == "punct" and toks[k].value == "=":
        k += 1
    return k if k < len(toks) and toks[k].kind in ("word", "qident", "string") else None


def _explicit(edits: _Edits, toks: list[Token], k: int) -> None:
    at = _value(toks, k)
    if at is None:
        return
    name = toks[at].value
    if tidb_charset(name.partition("_")[0]) not in CHARSETS:
        return                          # TiDB refuses its charset (1115) or name (1273) itself
    found = edits.tidb(name, "named in the statement")
    if found != tidb_name(name):
        edits.replaces.append((toks[at].start, toks[at].end, found))


def _charset_at(toks: list[Token], k: int) -> int | None:
    """If a charset clause starts at ``k``: the index of its name."""
    tok = toks[k]
    if tok.is_word("CHARSET"):
        return _value(toks, k)
    if tok.is_word("CHARACTER", "CHAR") and k + 1 < len(toks) and toks[k + 1].is_word("SET"):
        return _value(toks, k + 1)
    return None


def _scope(edits: _Edits, toks: list[Token], depth: list[int], scope: _Scope) -> None:
    own = [k for k in scope.indexes if depth[k] == scope.depth]
    collate = any(toks[k].is_word("COLLATE") for k in own)
    binary = any(toks[k].is_word("BINARY") for k in own if k > scope.type_at >= 0)
    names = [at for k in own if (at := _charset_at(toks, k)) is not None]
    if names and not collate and not binary:
        edits.default_of(toks[names[-1]].value, toks[names[-1]])
    if scope.type_at >= 0 and toks[scope.type_at].upper in NATIONAL and not collate:
        end = _type_end(toks, depth, scope)
        if binary:
            edits.inserts.append((end, " CHARACTER SET utf8"))
        else:
            name = edits.tidb("utf8_general_ci", "MariaDB's collation of NCHAR / NATIONAL")
            edits.inserts.append((end, f" CHARACTER SET utf8 COLLATE {name}"))


def _type_end(toks: list[Token], depth: list[int], scope: _Scope) -> int:
    """Where a column's type ends: after its words and its ``(length)``."""
    k = scope.type_at
    while k + 1 < len(toks) and toks[k + 1].upper in _TYPE_WORDS:
        k += 1
    if k + 1 < len(toks) and toks[k + 1].kind == "punct" and toks[k + 1].value == "(":
        k += 1
        while k + 1 < len(toks) and depth[k + 1] > scope.depth:
            k += 1
        k += 1                          # the closing parenthesis
    return toks[min(k, len(toks) - 1)].end


# -- the definitions of a statement --------------------------------------------------------

def _kind(toks: list[Token]) -> tuple[str, str, int] | None:
    """(CREATE|ALTER, TABLE|DATABASE, index after the object's name), or None."""
    words = [t.upper for t in toks[:6]]
    if not words or words[0] not in ("CREATE", "ALTER"):
        return None
    k = 1
    while k < len(toks) and toks[k].upper in ("OR", "REPLACE", "TEMPORARY", "ONLINE", "IGNORE"):
        k += 1
    if k >= len(toks) or toks[k].upper not in ("TABLE", "DATABASE", "SCHEMA"):
        return None
    what = "TABLE" if toks[k].upper == "TABLE" else "DATABASE"
    k += 1
    if k + 1 < len(toks) and toks[k].upper == "IF":
        k += 3 if toks[k + 1].upper == "NOT" else 2
    if what == "DATABASE" and k < len(toks) and toks[k].upper in (
            "DEFAULT", "CHARACTER", "CHARSET", "CHAR", "COLLATE"):
        return words[0], what, k        # ALTER DATABASE without a name
    k += 1                              # the name
    if k + 1 < len(toks) and toks[k].kind == "punct" and toks[k].value == ".":
        k += 2
    return words[0], what, k


def _creates_database(toks: list[Token]) -> bool:
    kind = _kind(toks)
    return kind is not None and kind[:2] == ("CREATE", "DATABASE")


def _scopes(toks: list[Token], depth: list[int]) -> list[_Scope]:
    kind = _kind(toks)
    if kind is None:
        return []
    verb, what, k = kind
    if what == "DATABASE":
        return [_Scope(list(range(k, len(toks))), 0)]
    if verb == "CREATE":
        return _create_table(toks, depth, k)
    return _alter_table(toks, depth, k)


def _create_table(toks: list[Token], depth: list[int], k: int) -> list[_Scope]:
    out = []
    if k < len(toks) and toks[k].kind == "punct" and toks[k].value == "(":
        close = _closing(depth, k)
        out += [_Scope(item, 1, item[1] if len(item) > 1 else -1)
                for item in _split(toks, depth, k + 1, close, 1)]
        k = close + 1
    options = []
    while k < len(toks) and not (depth[k] == 0 and toks[k].upper in _OPTIONS_END):
        options.append(k)
        k += 1
    return out + [_Scope(options, 0)]


def _alter_table(toks: list[Token], depth: list[int], k: int) -> list[_Scope]:
    out, options = [], []
    for spec in _split(toks, depth, k, len(toks), 0):
        first = toks[spec[0]].upper
        if first in ("ADD", "MODIFY", "CHANGE"):
            out += _column_specs(toks, depth, spec)
        elif first == "CONVERT":
            out.append(_Scope(spec, 0))
        else:
            options += spec
    return out + [_Scope(options, 0)]


def _column_specs(toks: list[Token], depth: list[int], spec: list[int]) -> list[_Scope]:
    """``ADD [COLUMN] c type ...``, ``ADD (c type, ...)``, ``MODIFY c type``, ``CHANGE a b type``."""
    verb = toks[spec[0]].upper
    k = 1
    if k < len(spec) and toks[spec[k]].is_word("COLUMN"):
        k += 1
    if verb == "ADD" and k < len(spec) and toks[spec[k]].upper in _ADD_OTHER:
        return []
    if verb == "ADD" and k < len(spec) and toks[spec[k]].kind == "punct" and toks[spec[k]].value == "(":
        start = spec[k]
        return [_Scope(item, 1, item[1] if len(item) > 1 else -1)
                for item in _split(toks, depth, start + 1, _closing(depth, start), 1)]
    if k < len(spec) and toks[spec[k]].is_word("IF"):
        k += 3 if k + 1 < len(spec) and toks[spec[k + 1]].is_word("NOT") else 2
    k += 2 if verb == "CHANGE" else 1       # the column's name(s)
    return [_Scope(spec, 0, spec[k] if k < len(spec) else -1)]


def _closing(depth: list[int], k: int) -> int:
    """The index of the parenthesis closing the one at ``k`` (the end if none)."""
    j = k + 1
    while j < len(depth) and depth[j] > depth[k]:
        j += 1
    return j


def _split(toks: list[Token], depth: list[int], start: int, end: int, level: int) -> list[list[int]]:
    """Token indexes from ``start`` to ``end`` cut at the commas of depth ``level``."""
    items: list[list[int]] = [[]]
    for k in range(start, min(end, len(toks))):
        if depth[k] == level and toks[k].kind == "punct" and toks[k].value == ",":
            items.append([])
        else:
            items[-1].append(k)
    return [item for item in items if item]


def _server_collation(edits: _Edits, toks: list[Token]) -> None:
    """CREATE DATABASE without a charset: the source's collation_server, explicitly."""
    cid = edits.session.collation_server
    name = collation_name(cid)
    if name is None:
        raise TargetError("the database gets the source's collation_server, which "
                          + ("the binlog does not give" if cid is None else
                             f"is collation id {cid}, unknown to TiDB"),
                          "create the database on TiDB yourself and run past this statement "
                          "with --no-ddl")
    found = edits.tidb(name, "the source's collation_server, which a CREATE DATABASE without "
                             "a charset gets")
    edits.inserts.append((toks[-1].end, f" COLLATE {found}"))
