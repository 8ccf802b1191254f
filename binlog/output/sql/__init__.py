"""SQL for row changes and statements: ``literals`` (exact literals of decoded values),
``renderer`` (the statements of a row change: ``SqlRenderer``), ``session`` (the replay's
session; DDL and statement-logged changes as the source ran them) and ``script`` (the
``--format sql``/``flashback`` writer, ``SqlWriter``).  ``binlog apply``
(binlog.replay) executes the statements of the first three on a target."""
