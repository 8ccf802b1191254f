"""Exit codes of every ``binlog`` subcommand: the one table (docs/troubleshooting.md "Exit codes" shows it).

Each code has one meaning whatever the subcommand; ``COMMANDS`` says which outcomes a
subcommand can have, and ``tests/binlog/test_exitcodes.py`` drives each subcommand into
each of them.  ``for_exception`` maps what a command raises to its code, so a command
never picks a number itself for an error, and no error ends in a traceback:

- the input stopped the run (a decoding error, a binlog missing from a sequence, a
  statement-logged change a command cannot reproduce), or ``doctor`` found a blocker: 1;
- bad usage (options, a malformed DSN or filter, a missing file, an extra not
  installed): 2;
- a server (``apply --to``, ``verify-rows --against``, ``--schema-from``, ``fetch
  --from``) could not be reached or refused: 5.
"""
from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    INPUT_ERROR = 1     # the input stopped the run; the message names file, offset, event
    USAGE = 2
    SKIPPED = 3         # damaged/undecodable input was skipped and reported, the rest read
    INCOMPLETE = 4      # the last file ends inside an event (still being written, or cut)
    SERVER = 5          # a server could not be reached or refused
    DIFFERENT = 6       # verify-rows: the target's rows differ
    INTERRUPTED = 130   # Ctrl-C (SIGINT) or SIGTERM (binlog.interrupts)


MEANING = {
    Exit.OK: "everything was read (applied, verified, ingested); doctor: nothing blocks",
    Exit.INPUT_ERROR: "the input stopped the run: a decoding error, a binlog missing from "
                      "a sequence (a gap; --allow-gaps reads on), or a change the command "
                      "cannot reproduce; the message names file, offset and event; or the "
                      "output could not be written (a full disk); doctor: a finding blocks "
                      "the migration",
    Exit.USAGE: "bad usage: options, a malformed DSN or table pattern, a missing file, an "
                "optional extra not installed",
    Exit.SKIPPED: "damaged or undecodable input was skipped and reported (dump --on-error "
                  "skip: the byte ranges on stderr; ingest: the records in errors/)",
    Exit.INCOMPLETE: "the last file ends inside an event (cut short or still being "
                     "written); everything before it was read",
    Exit.SERVER: "a server (apply --to, verify-rows --against, --schema-from, fetch --from, "
                 "doctor --from/--target) "
                 "could not be reached or refused",
    Exit.DIFFERENT: "verify-rows: rows of the target differ from the binlogs' last images",
    Exit.INTERRUPTED: "interrupted (Ctrl-C or SIGTERM; the record being written is finished first)",
}

_E = Exit
#: The outcomes each subcommand can end in (docs/troubleshooting.md "Exit codes"); any of them also ends
#: with 130 when interrupted.
COMMANDS = {
    "dump": (_E.OK, _E.INPUT_ERROR, _E.USAGE, _E.SKIPPED, _E.INCOMPLETE, _E.SERVER),
    "stats": (_E.OK, _E.INPUT_ERROR, _E.USAGE, _E.INCOMPLETE, _E.SERVER),
    "apply": (_E.OK, _E.INPUT_ERROR, _E.USAGE, _E.SERVER),
    "verify-rows": (_E.OK, _E.INPUT_ERROR, _E.USAGE, _E.SERVER, _E.DIFFERENT),
    "schema": (_E.OK, _E.INPUT_ERROR, _E.USAGE, _E.SERVER),
    "ingest": (_E.OK, _E.INPUT_ERROR, _E.USAGE, _E.SKIPPED, _E.SERVER),
    "fetch": (_E.OK, _E.INPUT_ERROR, _E.USAGE, _E.SERVER),
    "doctor": (_E.OK, _E.INPUT_ERROR, _E.USAGE, _E.SERVER),
    "serve": (_E.OK, _E.USAGE),
    "rewrite": (_E.OK, _E.INPUT_ERROR, _E.USAGE, _E.INCOMPLETE, _E.SERVER),
    "history": (_E.OK, _E.INPUT_ERROR, _E.USAGE),
}

# When several outcomes apply, the first of these wins (3 before 4: damage is worse news
# than a file still being written).
PRECEDENCE = (Exit.SKIPPED, Exit.INCOMPLETE)


def for_exception(exc: BaseException) -> Exit:
    """The exit code of an error a command raised."""
    from .errors import BinlogError, ServerError, UsageError

    if isinstance(exc, KeyboardInterrupt):
        return Exit.INTERRUPTED
    if isinstance(exc, UsageError):
        return Exit.USAGE
    if isinstance(exc, ServerError):
        return Exit.SERVER
    if isinstance(exc, BinlogError):
        return Exit.INPUT_ERROR
    raise TypeError(f"no exit code for {type(exc).__name__}") from exc


def markdown_table() -> str:
    """The table of docs/troubleshooting.md, generated from COMMANDS (the docs build and
    tests/docs compare the two)."""
    names = list(COMMANDS)
    lines = ["| code | meaning | " + " | ".join(f"`{n}`" for n in names) + " |",
             "| --- | --- | " + " | ".join("---" for _ in names) + " |"]
    for code in Exit:
        if code == Exit.INTERRUPTED:
            lines.append(f"| {int(code)} | {MEANING[code]} | " + " | ".join("x" for _ in names) + " |")
            continue
        marks = " | ".join("x" if code in COMMANDS[n] else "" for n in names)
        lines.append(f"| {int(code)} | {MEANING[code]} | {marks} |")
    return "\n".join(lines)
