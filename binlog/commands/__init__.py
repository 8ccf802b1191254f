"""Subcommands of `binlog` beyond dump and schema (see binlog.cli.COMMAND_MODULES)."""
