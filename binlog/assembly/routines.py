"""Stored-program definitions in a replay: triggers, procedures, functions and events.

A row-based binlog already holds every row a trigger wrote (the trigger fired on the
source and its rows were logged as row events); a replica applying row events does not
fire triggers.  Replaying ``CREATE TRIGGER`` and then the rows would write the trigger's
rows twice (``Duplicate entry``), so ``--format sql`` and ``apply`` leave trigger,
procedure, function and event definitions out by default (``--routines`` keeps them).

``DEFINER=`user`@`host``` names an account that may not exist on the target (the
statement then fails); ``--strip-definer`` drops the clause, so the object is defined by
the replaying account (MariaDB KB "CREATE TRIGGER": DEFINER defaults to CURRENT_USER).
"""
from __future__ import annotations

import re

#: The kinds ``routine_kind`` names.
ROUTINE_KINDS = ("TRIGGER", "PROCEDURE", "FUNCTION", "EVENT", "PACKAGE")

_IDENT = r"(?:`(?:[^`]|``)*`|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[\w$.%-]+)"
_DEFINER = re.compile(r"\bDEFINER\s*=\s*(?:CURRENT_USER(?:\s*\(\s*\))?|" + _IDENT
                      + r"(?:\s*@\s*" + _IDENT + r")?)\s*", re.I)
# The head of a CREATE/ALTER/DROP up to the object keyword (comments, OR REPLACE,
# ALGORITHM=..., DEFINER=..., SQL SECURITY ..., AGGREGATE, IF [NOT] EXISTS...).
_HEAD = re.compile(r"^\s*(?:/\*.*?\*/\s*)*(CREATE|ALTER|DROP)\b(.*?)\b("
                   + "|".join(ROUTINE_KINDS + ("TABLE", "VIEW", "DATABASE", "SCHEMA", "INDEX",
                                               "SEQUENCE", "USER", "ROLE", "SERVER"))
                   + r")\b", re.I | re.S)


def routine_kind(query: str) -> str | None:
    """TRIGGER / PROCEDURE / FUNCTION / EVENT / PACKAGE when the statement creates, alters
    or drops one (``CREATE DEFINER=`u`@`h` TRIGGER ...`` included), else None."""
    m = _HEAD.match(query)
    if not m:
        return None
    kind = m.group(3).upper()
    return kind if kind in ROUTINE_KINDS else None


def strip_definer(query: str) -> str:
    """The statement without its ``DEFINER = ...`` clause (only in the head, before the
    object keyword: a body that mentions DEFINER is left alone)."""
    m = _HEAD.match(query)
    if not m:
        return query
    head = _DEFINER.sub("", query[m.start(2):m.end(2)])
    return query[:m.start(2)] + head + query[m.end(2):]
