"""Sinks: JSON Lines and mariadb-binlog -v style text."""
