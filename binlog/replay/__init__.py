"""Replay of row changes: transactions, keys, TiCDC-style update splitting, writers."""
