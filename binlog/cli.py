"""The ``binlog`` command.

Exit codes: one table for every subcommand, in ``binlog.exitcodes`` (shown in docs/troubleshooting.md):
0 success; 1 the input stopped the run (the message on stderr names file, offset, event
type, table and column); 2 bad usage; 3 damage was seen and skipped (``--on-error
skip``; every skipped byte range is listed on stderr at the end); 4 the last file ends
inside an event (a file cut short or still being written): everything before that event
was decoded and a warning names its offset (``--follow`` waits for the rest instead);
5 a server could not be reached or refused; 6 verify-rows found differences; 130
interrupted.  When both 3 and 4 apply, 3 wins.

The subcommands live in ``binlog.commands`` (and ``spark_ingest.command``); this module
only assembles their parsers and turns errors into exit codes.
"""
from __future__ import annotations

import argparse
import sys

from . import interrupts
from .commands._common import EXIT_DAMAGE, EXIT_DECODE_ERROR, EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, Parser
from .errors import BinlogError, UsageError
from .exitcodes import Exit, for_exception
from .inert import escape
from .options import build

__all__ = ["EXIT_OK", "EXIT_DECODE_ERROR", "EXIT_USAGE", "EXIT_DAMAGE", "EXIT_INCOMPLETE",
           "build_parser", "main"]


class _Top(Parser):
    """``binlog``'s own parser: --version prints its ``version``, looked up only when
    asked for (importlib.metadata's search of the installed distributions cost ~15 ms;
    pyproject.toml reads the version from ``binlog.__version__``)."""

    @property
    def version(self) -> str:
        from . import __version__

        return f"binlog {__version__}"


def build_parser(argv=None) -> argparse.ArgumentParser:
    """The whole parser, or with ``argv`` naming a subcommand only that subcommand's:
    importing every command module (PyMySQL, the schema store, Spark's options...) was
    most of the start-up of every run.  ``--help``, ``--version``, no subcommand or an
    unknown one import none: the list of subcommands comes from COMMANDS."""
    parser = _Top(prog="binlog", description="Decode MariaDB/MySQL binlog files byte by byte.")
    build(parser, "binlog")                 # --version (binlog.options declares every option)
    sub = parser.add_subparsers(dest="command", required=True)
    chosen = _chosen(argv)
    if chosen is None:
        for name, (_module, text) in COMMANDS.items():
            sub.add_parser(name, help=text, add_help=False)
    else:
        for module in _command_modules((COMMANDS[chosen][0],)):
            module.add_parser(_Described(sub, chosen))   # each sets run=... on its parser
    return parser


# Each subcommand lives in its own module: each has add_parser(subparsers), which
# registers its parser with set_defaults(run=<function(args) -> exit code>).  The line
# `binlog --help` shows for each is here, so listing them imports none.
COMMANDS = {
    "dump": ("binlog.commands.dump", "decode binlog files to JSON Lines or text"),
    "schema": ("binlog.commands.schema", "inspect and maintain the schema store"),
    "stats": ("binlog.commands.stats", "per-table row counts, bytes, largest transactions, "
                                       "time range; --plot changes per minute"),
    "apply": ("binlog.commands.apply", "apply binlog row changes to a target server "
                                       "(checkpointed; --workers N in parallel)"),
    "verify-rows": ("binlog.commands.verify", "compare the rows a binlog changed with a "
                                              "target's, by TiCDC row checksums"),
    "fetch": ("binlog.commands.fetch", "copy a live server's binlogs into a directory, "
                                       "byte for byte"),
    "doctor": ("binlog.commands.doctor", "read-only migration preflight: what will break "
                                         "before a migration starts"),
    "rewrite": ("binlog.commands.rewrite", "rewrite legacy binlogs as MySQL 5.6-format binlogs "
                                           "(TIMESTAMP2/DATETIME2/TIME2) any consumer reads"),
    "serve": ("binlog.commands.serve", "serve (rewritten) binlogs over the replication "
                                       "protocol to unmodified replicas and CDC tools"),
    "ingest": ("spark_ingest.command", "ingest binlog files into Parquet (changes/, tables/, "
                                       "errors/), in this process or on Spark"),
    "history": ("spark_ingest.history_command", "the changes of one row, one transaction or one "
                                           "time range in a lake binlog ingest wrote (DuckDB)"),
}
COMMAND_MODULES = tuple(module for module, _text in COMMANDS.values())


class _Described:
    """The subparsers of ``binlog`` as a command module sees them: its parser gets its
    line of COMMANDS."""

    def __init__(self, sub, name: str):
        self.sub, self.name = sub, name

    def add_parser(self, name, **kw):
        return self.sub.add_parser(name, help=COMMANDS[self.name][1], **kw)


def _chosen(argv) -> str | None:
    """The subcommand ``argv`` names (its first word; the top-level parser has no option
    that takes a value), else None (--help, --version, a typo, nothing)."""
    words = sys.argv[1:] if argv is None else list(argv)
    first = words[0] if words else None
    return first if first in COMMANDS else None


def _command_modules(names=COMMAND_MODULES):
    import importlib

    for name in names:
        try:
            yield importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:     # the module exists but something it needs is missing
                raise


def main(argv=None) -> int:
    args = build_parser(argv).parse_args(argv)
    _tune_allocator()
    previous = interrupts.install()       # SIGTERM stops a command as Ctrl-C does (130)
    try:
        return args.run(args)
    except BinlogError as exc:
        # UsageError (2), ServerError (5), anything else the input caused (1)
        text = exc.message if isinstance(exc, UsageError) and not exc.hint else str(exc)
        # Errors quote servers and binlogs (made inert where quoted); the last guard
        # before the terminal escapes whatever control character is left, line by line.
        text = "\n".join(escape(line) for line in text.split("\n"))
        sys.stderr.write(f"binlog: error: {text}\n")
        return for_exception(exc)
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): not an error of ours.
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        return Exit.INTERRUPTED
    except OSError as exc:
        # Inputs raise InputError (a BinlogError) naming file and offset; what is left
        # is our output failing (a full disk, /dev/full, a closed descriptor).
        _drop_stdout()
        where = f" {exc.filename}" if exc.filename else " the output"
        sys.stderr.write(f"binlog: error: cannot write{where}: {exc.strerror or exc}\n")
        return Exit.INPUT_ERROR
    finally:
        interrupts.restore(previous)


def _tune_allocator() -> None:
    """Keep the megabyte buffers a run frees for reuse instead of faulting fresh pages in
    for every chunk (binlog/_speedups_verify.c ``tune_allocator``: a 200 MB JSON dump 1.12-1.20 s
    -> 0.99-1.02 s).  Only here: the command owns its process."""
    from .rows import compiled_module  # (the switch pure mode turns off, tests' too)

    speedups = compiled_module()
    if speedups is not None:
        speedups.tune_allocator()


def _drop_stdout() -> None:
    """Point stdout at /dev/null: the interpreter's final flush of what could not be
    written would fail again and print a second, raw error."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass        # no usable stdout at all: nothing will be flushed to it either


if __name__ == "__main__":
    sys.exit(main())
