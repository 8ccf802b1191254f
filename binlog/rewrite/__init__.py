"""``binlog rewrite``: legacy MariaDB binlogs as MySQL 5.6-format binlogs, sans-IO.

- ``converter``: events in, events out (``Rewriter``, ``StreamRewriter``): what changes
  and why is its docstring;
- ``images``: the row images of a rows event with each legacy value re-encoded (the
  hot path);
- ``position_map``: the ``NAME.map`` file beside each output binlog, which ``sources/``
  reads back to translate positions.

The TABLE_MAP TLVs of ``--full-metadata`` are written by ``events.table_map``
(``full_metadata_tlvs``, beside their decoder), a compressed block by ``compression``.
"""
from .converter import RewriteOptions, Rewriter, RewriteStats, Rewritten, StreamRewriter
from .position_map import MAP_HEADER, MapEntry, lookup, parse_map

__all__ = ["MAP_HEADER", "MapEntry", "RewriteOptions", "RewriteStats", "Rewriter", "Rewritten",
           "StreamRewriter", "lookup", "parse_map"]
