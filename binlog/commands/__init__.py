"""Subcommands of `binlog`, one module each (see binlog.cli.COMMAND_MODULES)."""
