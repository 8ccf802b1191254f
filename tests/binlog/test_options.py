"""One declaration per option (binlog/options.py): every parser of ``binlog`` takes
exactly the options of its layout there, nothing is added to a parser anywhere else, and
the Spark data source reads the options it shares with the command line with the same
defaults, types and choices."""
from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from binlog import cli, options
from binlog.commands._common import Parser
from binlog.errors import UsageError
from binlog.options import COMMAND_OPTIONS, OPTIONS, SOURCES, options_of, source_value
from spark_ingest.options import OPTION_NAMES, ReadOptions, parse_options

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("binlog", "schema_store", "spark_ingest")


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser as ``binlog`` builds it: {"dump": ..., "schema set": ...}."""
    found = {"binlog": cli.build_parser(["--help"])}

    def walk(name: str, parser: argparse.ArgumentParser) -> None:
        found[name] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for word, sub in action.choices.items():
                    walk(f"{name} {word}", sub)

    for command in cli.COMMANDS:
        walk(command, _subparser(cli.build_parser([command]), command))
    return found


def _subparser(parser, word):
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[word]


def own_actions(parser) -> list[argparse.Action]:
    return [a for a in parser._actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


PARSERS = parsers()


@pytest.mark.parametrize("command", sorted(set(PARSERS) - {"schema"}))
def test_each_parser_takes_exactly_its_declared_options(command):
    actions = own_actions(PARSERS[command])
    declared = options_of(command)
    assert [(a.option_strings or [a.dest])[0] for a in actions] == [o.flags[0] for o in declared]
    for action, option in zip(actions, declared, strict=True):
        for name, value in option.kw.items():
            got = action.__class__ if name == "action" else getattr(action, name)
            if name == "action" and isinstance(value, str):
                got = {argparse._StoreTrueAction: "store_true", argparse._AppendAction: "append",
                       argparse._VersionAction: "version"}.get(type(action), type(action))
            assert got == value, (command, option.key, name)


def test_every_layout_is_a_parser_and_every_option_is_used():
    assert set(COMMAND_OPTIONS) == set(PARSERS) - {"schema"}
    used = {o.key for command in COMMAND_OPTIONS for o in options_of(command)}
    assert sorted(set(OPTIONS) - used) == []


def test_no_option_is_added_outside_the_table():
    """The builder (binlog.options._add) is the only caller of add_argument in the
    packages: an option declared by hand in a command module fails here."""
    calls = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in ("add_argument", "add_argument_group",
                                               "add_mutually_exclusive_group")):
                    calls.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert calls and all(c.startswith("binlog/options.py:") for c in calls), calls


def test_a_flag_is_declared_twice_only_under_a_command_prefix():
    """``--to`` is apply's target, fetch's directory...: such a second meaning is
    declared as ``CMD:FLAG``; a plain key is the one declaration of its flag."""
    plain: dict[tuple[str, ...], str] = {}
    for key, option in OPTIONS.items():
        if ":" not in key:
            assert option.flags not in plain, (key, plain.get(option.flags))
            plain[option.flags] = key


# -- the data source and the command line ---------------------------------------------------
MINIMAL = {"dump": [], "ingest": ["x", "--to", "o"]}


def cli_parser_of(key: str):
    """A built parser that takes the option ``key``, with the arguments it needs."""
    for command, argv in MINIMAL.items():
        if OPTIONS[key] in options_of(command):
            parser = Parser(prog=f"binlog {command}")
            options.build(parser, command)
            return parser, argv
    raise AssertionError(f"{key}: no command of MINIMAL takes it")


SHARED = sorted(k for k, (option, _) in SOURCES.items() if option is not None)


def test_the_shared_options_are_the_data_sources_spelling_of_the_flags():
    for key in SHARED:
        option = SOURCES[key][0]
        assert option.flags == (f"--{key}",), key
    assert set(OPTION_NAMES) == set(SOURCES)


def _as_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


@pytest.mark.parametrize("key", SHARED)
def test_defaults_agree(key):
    option, source = SOURCES[key]
    parser, argv = cli_parser_of(key)
    cli_default = getattr(parser.parse_args(argv), parser._option_string_actions[option.flags[0]].dest)
    expected = getattr(ReadOptions(), source.field)
    if cli_default is None:
        assert expected is None
    else:
        # e.g. --no-track-ddl off = track_ddl true; --encryption-algorithm auto = None
        assert source_value(key, _as_text(cli_default)) == expected


# Values both sides must accept, and values both must refuse, where the type or the
# choices do not say: the command line keeps these as text and its command converts
# them (ingest: parse_size; the key ring: check_algorithm), as the data source does.
GOOD = {"split-size": ["64m", "0", "1048576", "64KiB"], "encryption-algorithm": ["cbc", "ctr", "auto"]}
BAD = {"split-size": ["big", "-1"], "encryption-algorithm": ["rot13"]}


def _values(key: str, option) -> tuple[list[str], list[str]]:
    kw = option.kw
    if key in GOOD:
        return GOOD[key], BAD[key]
    if kw.get("choices"):
        return [str(c) for c in kw["choices"]], ["no-such-choice"]
    if kw.get("type") is int:
        return ["12", "0"], ["twelve", "1.5"]
    return ["some value", "shop.%"], []


@pytest.mark.parametrize("key", SHARED)
def test_values_agree(key):
    option, source = SOURCES[key]
    parser, argv = cli_parser_of(key)
    dest = parser._option_string_actions[option.flags[0]].dest
    if option.kw.get("action") == "store_true":
        given = getattr(parser.parse_args([*argv, option.flags[0]]), dest)
        assert source_value(key, "true") == ((not given) if source.negate else given)
        assert source_value(key, "false") == (not source_value(key, "true"))
        return
    good, bad = _values(key, option)
    assert good
    for text in good:
        got = getattr(parser.parse_args([*argv, option.flags[0], text]), dest)
        if source.convert is not None:
            got = source.convert(got)       # what the command does with the text
        assert got == source_value(key, text), (key, text)
    for text in bad:
        with pytest.raises(UsageError, match=None if source.convert else f"option {key}"):
            parse_options({key: text})
        if source.convert is not None:
            with pytest.raises(UsageError):
                source.convert(parser.parse_args([*argv, option.flags[0], text]).__dict__[dest])
        else:
            with pytest.raises(SystemExit):
                parser.parse_args([*argv, option.flags[0], text])


def test_lists_repeat_on_the_command_line_and_split_in_the_data_source():
    parser, argv = cli_parser_of("table")
    args = parser.parse_args([*argv, "--table", "a.%", "--table", "b.t"])
    assert parse_options({"table": "a.%, b.t"}).table == args.table == ["a.%", "b.t"]
    assert parse_options({"table": '["a.%", "b.t"]'}).table == args.table


def test_spellings_the_data_source_accepted_before():
    opts = parse_options({"Schema_DDL": "a.sql, b.sql", "on-error": "SKIP", "with_types": "yes",
                          "allowGaps": "true", "followSymlinks": "1", "BINARY_ENCODING": "Base64",
                          "track-ddl": "false", "verify_checksum": "off", "batch-size": "0",
                          "encryption-algorithm": "AES_CTR", "key-file-digest": "SHA256",
                          "path": "one.bin", "paths": "two.bin,three.bin", "plan": "ignored"})
    assert opts.schema_ddl == ["a.sql", "b.sql"] and opts.on_error == "skip" and opts.with_types
    assert opts.allow_gaps and opts.follow_symlinks and opts.binary_encoding == "base64"
    assert not opts.track_ddl and not opts.verify_checksums and opts.batch_size == 1
    assert opts.encryption_algorithm == "ctr" and opts.key_file_digest == "sha256"
    assert opts.paths == ["one.bin", "two.bin", "three.bin"]
    for bad, message in (({"on-error": "maybe"}, "expected fail or skip, got 'maybe'"),
                         ({"infer-precision": "perhaps"}, "expected true or false"),
                         ({"start-position": "x"}, "expected an integer"),
                         ({"batch-size": "many"}, "expected an integer"),
                         ({"split-size": "big"}, "bad size"),
                         ({"tabel": "x"}, "unknown option 'tabel'")):
        with pytest.raises(UsageError, match=message):
            parse_options(bad)
