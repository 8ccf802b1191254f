"""Splitting SQL scripts into statements and statements into tokens (MySQL/MariaDB rules).

Two passes, both aware of quoting:

* :func:`split_statements` cuts a script (a ``mariadb-dump`` file, a ``CREATE TABLE``
  script, a QUERY event's text) at the current delimiter.  It honours ``'...'``, ``"..."``
  and ```...``` quoting (backslash escapes and doubled quotes), ``-- `` / ``#`` line
  comments, ``/* ... */`` block comments (a ``;`` inside one never ends a statement) and
  ``DELIMITER xx`` lines as the ``mariadb`` client does, so stored procedures and triggers
  in dumps come out as one statement each.
* :func:`tokenize` turns one statement into :class:`Token` objects.  Executable comments
  ``/*!NNNNN x */`` and ``/*M!NNNNNN x */`` are unwrapped (their content is part of the
  statement on the server they target), except version 999999 which marks client-only
  commands such as the dump header's ``/*M!999999\\- enable the sandbox mode */``.  Other
  comments are dropped, except the ``/* mariadb-5.3 */`` marker MariaDB 10.5.1+ writes
  after a legacy temporal column's type: it becomes a ``MARKER`` token.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import DdlParseError

#: The comment MariaDB 10.5.1+ prints after the type of a legacy (MariaDB 5.3 format)
#: TIMESTAMP/DATETIME/TIME column in SHOW CREATE TABLE and INFORMATION_SCHEMA.COLUMNS.
LEGACY_MARKER = "mariadb-5.3"

_MARKER_RE = re.compile(r"/\*\s*mariadb-5\.3\s*\*/", re.IGNORECASE)
_EXEC_RE = re.compile(r"/\*(M?)!(\d*)")
_DELIMITER_RE = re.compile(r"[ \t]*delimiter[ \t]+(\S+)[ \t]*(?:\r?\n|$)", re.IGNORECASE)
_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}


@dataclass(frozen=True)
class Statement:
    text: str
    line: int           # 1-based line of its first character in the script

    @property
    def first_line(self) -> str:
        for line in self.text.strip().splitlines():
            if line.strip():
                return line.strip()[:200]
        return ""


def has_legacy_marker(text: str) -> bool:
    """Whether ``/* mariadb-5.3 */`` appears in ``text`` (anywhere, strings included)."""
    return _MARKER_RE.search(text) is not None


def _skip_quoted(text: str, i: int, n: int | None = None) -> int:
    """Index just past the quoted string/identifier starting at ``text[i]`` (at most ``n``)."""
    q = text[i]
    n = len(text) if n is None else n
    i += 1
    while i < n:
        c = text[i]
        if c == "\\" and q != "`":
            i += 2
            continue
        if c == q:
            if i + 1 < n and text[i + 1] == q:     # doubled quote
                i += 2
                continue
            return i + 1
        i += 1
    return n     # unterminated: runs to the end (the statement is then bad, not the split)


def _line_comment_at(text: str, i: int, n: int | None = None) -> bool:
    n = len(text) if n is None else n
    if text[i] == "#":
        return True
    return text.startswith("--", i, n) and (i + 2 >= n or text[i + 2] in " \t\r\n")


def split_statements(text: str) -> list[Statement]:
    """Statements of a script, without their delimiters; blank/comment-only ones dropped."""
    out: list[Statement] = []
    delim = ";"
    n = len(text)
    i = 0
    start = 0
    line = 1
    start_line = 1
    at_line_start = True

    def emit(end: int) -> None:
        chunk = text[start:end]
        if _has_content(chunk):
            out.append(Statement(chunk.strip(), start_line + _leading_newlines(chunk)))

    special = _special_re(delim)
    while i < n:
        if at_line_start:
            m = _DELIMITER_RE.match(text, i)
            if m and not _has_content(text[start:i]):
                delim = m.group(1)
                special = _special_re(delim)
                line += text.count("\n", i, m.end())
                i = start = m.end()
                start_line = line
                continue
        at_line_start = False
        m = special.search(text, i)
        if m is None:
            break
        i = m.start()
        c = text[i]
        if c == "\n":
            line += 1
            at_line_start = True
            i += 1
        elif c in "'\"`":
            j = _skip_quoted(text, i)
            line += text.count("\n", i, j)
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif _line_comment_at(text, i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith(delim, i):
            emit(i)
            i += len(delim)
            start = i
            start_line = line
        else:
            i += 1
    emit(n)
    return out


def _special_re(delim: str) -> "re.Pattern[str]":
    chars = set("\n'\"`/#-") | {delim[0]}
    return re.compile("[" + "".join(re.escape(ch) for ch in sorted(chars)) + "]")


def _leading_newlines(chunk: str) -> int:
    stripped = chunk.lstrip()
    return chunk[: len(chunk) - len(stripped)].count("\n")


def _has_content(chunk: str) -> bool:
    """True unless the chunk is only whitespace and non-executable comments."""
    return bool(tokenize(chunk, keep_markers=False)) if chunk.strip() else False


# --- tokens ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Token:
    kind: str        # 'word' (bare identifier/keyword), 'qident' (`quoted`), 'string', 'number', 'punct', 'marker'
    value: str       # unescaped text for strings/qidents; as written for words/numbers/punct
    #: where its text is in the statement: ``text[start:end]`` (inside an executable
    #: comment too), for a rewrite that inserts after a token (replay.tidb.ddl)
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.value.upper() in words

    @property
    def upper(self) -> str:
        return self.value.upper() if self.kind == "word" else ""

    @property
    def is_ident(self) -> bool:
        return self.kind in ("word", "qident") or (self.kind == "string" and self.value != "")


_WORD_RE = re.compile(r"[A-Za-z0-9_$\u0080-\uffff]+")
_NUMBER_RE = re.compile(r"(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")
_PUNCT3 = ("<=>",)
_PUNCT2 = ("<=", ">=", "<>", "!=", "||", "&&", ":=", "<<", ">>", "->")


def _unescape(body: str, q: str) -> str:
    if q == "`":
        return body.replace("``", "`")
    out = []
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c == "\\" and i + 1 < n:
            nxt = body[i + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
        elif c == q and i + 1 < n and body[i + 1] == q:
            out.append(q)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tokenize(text: str, *, keep_markers: bool = True) -> list[Token]:
    """Tokens of one statement; see the module docstring for comment handling."""
    toks: list[Token] = []
    _tokenize_into(text, 0, len(text), toks, keep_markers)
    return toks


def _tokenize_into(text: str, i: int, n: int, toks: list[Token], keep_markers: bool) -> None:
    """The tokens of ``text[i:n]`` (positions are in ``text``)."""
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c == "/" and text.startswith("/*", i, n):
            j = text.find("*/", i + 2, n)
            end = n if j < 0 else j
            m = _EXEC_RE.match(text, i, n)
            if m:
                version = m.group(2)
                if version and int(version) >= 999999:      # client-only (sandbox) command
                    i = end + 2
                    continue
                _tokenize_into(text, m.end(), end, toks, keep_markers)
            elif keep_markers and _MARKER_RE.fullmatch(text, i, end + 2):
                toks.append(Token("marker", LEGACY_MARKER, i, min(end + 2, n)))
            i = end + 2
            continue
        if _line_comment_at(text, i, n):
            j = text.find("\n", i, n)
            i = n if j < 0 else j
            continue
        if c in "'\"`":
            j = _skip_quoted(text, i, n)
            body = text[i + 1: j - 1] if j <= n and text[j - 1] == c and j - i >= 2 else text[i + 1: j]
            toks.append(Token("qident" if c == "`" else "string", _unescape(body, c), i, j))
            i = j
            continue
        # hex/bit/national literals: x'..', b'..', n'..'
        if c in "xXbBnN" and i + 1 < n and text[i + 1] == "'":
            j = _skip_quoted(text, i + 1, n)
            toks.append(Token("string", _unescape(text[i + 2: j - 1], "'"), i, j))
            i = j
            continue
        m = _NUMBER_RE.match(text, i, n)
        if m and (m.end() >= n or not _WORD_RE.match(text[m.end()])):
            toks.append(Token("number", m.group(), i, m.end()))
            i = m.end()
            continue
        m = _WORD_RE.match(text, i, n)
        if m:
            toks.append(Token("word", m.group(), i, m.end()))
            i = m.end()
            continue
        for p in _PUNCT3 + _PUNCT2:
            if text.startswith(p, i, n):
                toks.append(Token("punct", p, i, i + len(p)))
                i += len(p)
                break
        else:
            toks.append(Token("punct", c, i, i + 1))
            i += 1


class TokenStream:
    """A cursor over a statement's tokens with the small helpers the DDL parser needs."""

    def __init__(self, toks: list[Token], stmt: Statement, source: str):
        self.toks = toks
        self.i = 0
        self.stmt = stmt
        self.source = source

    # -- errors ----------------------------------------------------------------------
    def error(self, message: str, table: str | None = None, column: str | None = None) -> DdlParseError:
        near = " ".join(t.value for t in self.toks[self.i: self.i + 6])
        where = f" near {near!r}" if near else " at end of statement"
        return DdlParseError(f"{message}{where}; statement: {self.stmt.first_line!r}",
                             source=self._where(), table=table, column=column)

    def _where(self) -> str | None:
        if self.source:
            return f"{self.source}:{self.stmt.line}"
        return f"line {self.stmt.line}"

    # -- access ----------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.i >= len(self.toks)

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def current(self) -> Token:
        """The next token, not consumed; a DdlParseError at the end of the statement."""
        if self.i >= len(self.toks):
            raise self.error("unexpected end of statement")
        return self.toks[self.i]

    def peek_upper(self) -> str:
        """The next token's upper-case text ("" at the end of the statement)."""
        t = self.peek()
        return t.upper if t is not None else ""

    def next(self) -> Token:
        if self.i >= len(self.toks):
            raise self.error("unexpected end of statement")
        t = self.toks[self.i]
        self.i += 1
        return t

    def at_word(self, *words: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.is_word(*words)

    def at_punct(self, p: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.kind == "punct" and t.value == p

    def accept_word(self, *words: str) -> str | None:
        if self.at_word(*words):
            return self.next().value.upper()
        return None

    def accept_words(self, *seq: str) -> bool:
        """Consume the exact word sequence ``seq`` if it is next."""
        for k, w in enumerate(seq):
            if not self.at_word(w, k=k):
                return False
        self.i += len(seq)
        return True

    def accept_punct(self, p: str) -> bool:
        if self.at_punct(p):
            self.i += 1
            return True
        return False

    def expect_word(self, *words: str) -> str:
        w = self.accept_word(*words)
        if w is None:
            raise self.error(f"expected {' or '.join(words)}")
        return w

    def expect_punct(self, p: str) -> None:
        if not self.accept_punct(p):
            raise self.error(f"expected {p!r}")

    def ident(self, what: str = "identifier") -> str:
        t = self.peek()
        if t is None or not (t.kind in ("word", "qident") or t.kind == "string"):
            raise self.error(f"expected {what}")
        self.i += 1
        return t.value

    def skip_group(self) -> list[Token]:
        """Skip a balanced ``( ... )`` group starting at the current '('; return its inside."""
        self.expect_punct("(")
        start = self.i
        depth = 1
        while depth:
            t = self.next()
            if t.kind == "punct":
                if t.value == "(":
                    depth += 1
                elif t.value == ")":
                    depth -= 1
        return self.toks[start: self.i - 1]

    def until_top_level(self, *stops: str) -> list[Token]:
        """Tokens up to (not including) a top-level punct in ``stops`` or the end."""
        start = self.i
        depth = 0
        while not self.done:
            t = self.current()
            if t.kind == "punct":
                if t.value == "(":
                    depth += 1
                elif t.value == ")":
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0 and t.value in stops:
                    break
            self.i += 1
        return self.toks[start: self.i]


def split_top_level(toks: list[Token], sep: str = ",") -> list[list[Token]]:
    """Split a token list at top-level ``sep`` punctuation."""
    parts: list[list[Token]] = [[]]
    depth = 0
    for t in toks:
        if t.kind == "punct" and t.value == "(":
            depth += 1
        elif t.kind == "punct" and t.value == ")":
            depth -= 1
        elif t.kind == "punct" and t.value == sep and depth == 0:
            parts.append([])
            continue
        parts[-1].append(t)
    return [p for p in parts if p] if any(parts) else []
