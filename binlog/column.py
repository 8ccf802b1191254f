"""What the parser knows about one column of a table, from TABLE_MAP (and later the schema).

A column decoder is a plain function::

    decode(buf: bytes, pos: int, end: int, col: Column) -> tuple[value, new_pos]

reading one non-NULL value that starts at ``buf[pos]`` and must not read at or past
``end``.  It raises ``TruncatedError`` / ``MalformedEventError`` without offsets; the rows
decoder adds file, event, table, column and the absolute field offset.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import tzinfo

from .constants import BINARY_COLLATION, ColumnType as T

# Types whose values are strings in some charset (BLOB/TEXT share their type codes).
CHARACTER_TYPES = frozenset({T.VARCHAR, T.VAR_STRING, T.STRING, T.BLOB, T.TINY_BLOB,
                             T.MEDIUM_BLOB, T.LONG_BLOB, T.BLOB_COMPRESSED,
                             T.VARCHAR_COMPRESSED})


@dataclass
class Column:
    index: int                      # 0-based position in the table
    binlog_type: int                # type byte as written in TABLE_MAP
    type: int                       # real type: STRING metadata remapped to ENUM/SET/STRING
    meta: int = 0                   # metadata as read from TABLE_MAP (16-bit, see types.metadata)
    length: int = 0                 # STRING/VARCHAR: max byte length; BLOB/GEOMETRY/JSON: length-prefix size
    precision: int | None = None    # fsp for *2 temporals; legacy 7/12/11: N if known, else None
    scale: int = 0                  # NEWDECIMAL scale (precision holds the digits)
    nullable: bool = True
    unsigned: bool = False
    name: str | None = None
    collation: int | None = None    # collation id from optional metadata or schema
    encoding: str | None = None     # Python codec for text columns; None if unknown or binary
    enum_values: tuple[str, ...] | None = None
    set_values: tuple[str, ...] | None = None
    geometry_type: int | None = None
    vector_dim: int | None = None
    tz: tzinfo | None = None        # TIMESTAMP display zone; None means UTC
    ts_offset: bool = False         # TIMESTAMP as ISO 8601 with tz's offset at that instant
    extra: dict = field(default_factory=dict)

    @property
    def is_binary(self) -> bool:
        return self.collation == BINARY_COLLATION

    @property
    def charset_unknown(self) -> bool:
        """A character (or BLOB: the binlog does not tell BLOB from TEXT) column whose
        charset neither the TABLE_MAP nor a schema gave: its values stay bytes."""
        return self.collation is None and self.encoding is None and self.type in CHARACTER_TYPES

    @property
    def label(self) -> str:
        """How messages name the column: `name` (@n) or @n (1-based, as mysqlbinlog)."""
        if self.name:
            return f"`{self.name}` (@{self.index + 1})"
        return f"@{self.index + 1}"

    @property
    def key(self) -> str:
        """Key in output records: the name when known, else @n."""
        return self.name if self.name else f"@{self.index + 1}"
