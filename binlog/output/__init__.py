"""Writers of ``binlog dump`` (``base.Writer``): JSON Lines (``json_lines``; with
``--checksum`` or ``--split-updates``: ``extras``), text (``text``), SQL and flashback
(``sql``), change records (``cdc``), Debezium (``debezium``); the values they share
(``values``); writers around a writer (``routing``: --bigint-as-string, --rewrite-db,
--output-dir) and safe per-table paths (``paths``)."""
