"""The generated parts of the documentation site, and the MkDocs hook that checks them.

Several kinds of tables in ``docs/`` are written by code, not by hand, between marker
comments:

- ``<!-- options:CMD:begin ... -->`` ... ``<!-- options:CMD:end -->``: the options of
  ``binlog CMD`` (``CMD`` may be ``schema set``), rendered from the real argparse parser
  that ``binlog.cli.build_parser`` assembles (names, metavars, choices, help text);
- ``<!-- exit-codes:begin ... -->`` ... ``<!-- exit-codes:end -->``: the exit code table,
  ``binlog.exitcodes.markdown_table()``;
- ``<!-- data-source-options:begin ... -->`` ... ``<!-- data-source-options:end -->``: the
  Spark data source's options, ``binlog.options.source_table()``;
- ``<!-- layers:begin ... -->`` ... ``<!-- layers:end -->``: the layers of the code, top
  first, from ``LAYERS`` in ``tests/test_layers.py`` (the list that test enforces); the
  page holding it must name every module prefix of the list in code outside the block
  (what that part owns), so a layer added to the test without a description fails too.

The parsers and the data source's options come from one table, ``binlog.options``
(one declaration per option).

``python tools/docs_reference.py --write`` rewrites every such block from the code;
``python tools/docs_reference.py`` (and the MkDocs hook, so ``mkdocs build`` and
``make docs``) fails naming each block that no longer matches, so the pages cannot
drift from the parsers.
"""
from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
REGENERATE = "python tools/docs_reference.py --write"

# <!-- NAME:begin (comment) --> ... <!-- NAME:end -->, NAME "exit-codes",
# "data-source-options", "layers" or "options:CMD"
BLOCK = re.compile(r"(<!-- (?P<name>exit-codes|data-source-options|layers|options:[a-z -]+):begin[^>]*-->\n)(?P<body>.*?)(?P<end><!-- (?P=name):end -->)",
                   re.S)
LAYERS_SOURCE = REPO / "tests" / "test_layers.py"


def layers() -> list[list[tuple[str, ...]]]:
    """``LAYERS`` of tests/test_layers.py, read from its text (the test module imports
    pytest, which the site's build need not have)."""
    import ast

    for node in ast.parse(LAYERS_SOURCE.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "LAYERS":
            return ast.literal_eval(node.value)
    raise KeyError(f"{LAYERS_SOURCE}: no LAYERS list")


def layers_table() -> str:
    """Markdown: one row per layer, top first; the groups of a layer (which do not import
    each other) separated by a semicolon."""
    out = ["| layer | modules (a prefix: the package and everything in it) |", "| --- | --- |"]
    for n, groups in enumerate(layers(), 1):
        cells = "; ".join(", ".join(f"`{prefix}`" for prefix in group) for group in groups)
        out.append(f"| {n} | {cells} |")
    return "\n".join(out) + "\n"


def undescribed(text: str) -> list[str]:
    """The module prefixes of LAYERS that a page holding the layers block does not name
    in code outside it (none when it holds no such block)."""
    if "<!-- layers:begin" not in text:
        return []
    rest = BLOCK.sub("", text)
    return [prefix for groups in layers() for group in groups for prefix in group
            if f"`{prefix}`" not in rest and f"`{prefix.lstrip('=')}`" not in rest]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def command_parser(command: str) -> argparse.ArgumentParser:
    """The parser of ``binlog COMMAND`` (``"schema set"``: a subcommand's subcommand)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from binlog import cli

    words = command.split()
    parser = cli.build_parser(words[:1])
    for word in words:
        choices = _subparsers(parser)
        if word not in choices:
            raise KeyError(f"binlog {command}: no such subcommand (have {', '.join(choices)})")
        parser = choices[word]
    return parser


def _cell(text: str) -> str:
    """Help text as one table cell: HTML and Markdown specials escaped, ``|`` as an entity
    (GitHub and Python-Markdown split cells on it, even inside a code span)."""
    text = html.escape(" ".join(text.split()), quote=False)
    text = re.sub(r"([\\`*_\[\]])", r"\\\1", text)
    return text.replace("|", "&#124;")


def _code(text: str) -> str:
    """An option's spelling as inline code that keeps ``|`` in both renderers."""
    return "<code>" + html.escape(text, quote=False).replace("|", "&#124;") + "</code>"


def _spelling(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    """``--format {json,text}``, ``--safe, --no-safe``, ``FILE|DIR ...``: as --help shows it."""
    if not action.option_strings:
        return formatter._format_args(action, formatter._get_default_metavar_for_positional(action))
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    args = formatter._format_args(action, formatter._get_default_metavar_for_optional(action))
    return ", ".join(f"{name} {args}" for name in action.option_strings)


def option_table(command: str) -> str:
    """Markdown: one table per argument group of ``binlog COMMAND`` (--help left out)."""
    parser = command_parser(command)
    formatter = parser._get_formatter()
    out: list[str] = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions
                   if a.help != argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)
                   and not isinstance(a, argparse._SubParsersAction)]
        if not actions:
            continue
        kind = "argument" if all(not a.option_strings for a in actions) else "option"
        out += [f"**{group.title}**", "", f"| {kind} | meaning |", "| --- | --- |"]
        for action in actions:
            meaning = formatter._expand_help(action) if action.help else ""
            out.append(f"| {_code(_spelling(action, formatter))} | {_cell(meaning)} |")
        out.append("")
    return "\n".join(out)


def render(name: str) -> str:
    """The body of the block ``name`` as the code gives it."""
    if name == "exit-codes":
        if str(REPO) not in sys.path:
            sys.path.insert(0, str(REPO))
        from binlog.exitcodes import markdown_table

        return markdown_table().rstrip("\n") + "\n"
    if name == "layers":
        return layers_table()
    if name == "data-source-options":
        if str(REPO) not in sys.path:
            sys.path.insert(0, str(REPO))
        from binlog.options import source_table

        return source_table()
    return option_table(name.removeprefix("options:")).rstrip("\n") + "\n"


def refresh(text: str) -> tuple[str, list[str]]:
    """``text`` with every block rendered afresh, and the names of the blocks that changed."""
    stale: list[str] = []

    def fresh(match: re.Match[str]) -> str:
        body = render(match["name"])
        if body != match["body"]:
            stale.append(match["name"])
        return match.group(1) + body + match["end"]

    return BLOCK.sub(fresh, text), stale


def check(pages: list[Path], write: bool = False) -> list[str]:
    """``PAGE: BLOCK`` for every stale block (rewritten first when ``write``)."""
    problems = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        new, stale = refresh(text)
        if stale and write:
            page.write_text(new, encoding="utf-8")
        problems += [f"{page.relative_to(REPO)}: {name}" for name in stale]
        problems += [f"{page.relative_to(REPO)}: layer {prefix} has no description"
                     for prefix in undescribed(text)]
    return problems


def on_page_markdown(markdown: str, page, config, files) -> str:
    """MkDocs hook: a generated block that differs from the code fails the build."""
    from mkdocs.exceptions import PluginError

    _, stale = refresh(markdown)
    if stale:
        raise PluginError(f"{page.file.src_path}: generated block(s) {', '.join(stale)} differ from "
                          f"the code; run `{REGENERATE}`")
    missing = undescribed(markdown)
    if missing:
        raise PluginError(f"{page.file.src_path}: the layers of tests/test_layers.py name "
                          f"{', '.join(missing)}, which the page does not describe")
    return markdown


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check (or --write) the generated tables of docs/.")
    ap.add_argument("--write", action="store_true", help="rewrite stale blocks from the code")
    args = ap.parse_args(argv)
    problems = check(sorted(DOCS.rglob("*.md")), write=args.write)
    for problem in problems:
        print(("rewrote " if args.write else "stale: ") + problem)
    return 1 if problems and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
