"""Replay of row changes into a target, one layer above ``binlog.output``: the tables'
keys (``keys``), multi-row statements (``batch``), BINLOG statements (``binlog_statements``),
requests of several statements (``packets``), parallel workers (``parallel``) and the
applier of ``binlog apply`` (``applier``)."""
