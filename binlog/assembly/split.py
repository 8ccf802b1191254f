"""``--split-updates``: TiCDC's view of a transaction (shared/seeds/001).

TiCDC sees one net change per row and transaction; an UPDATE that changes the primary
key or a NOT NULL unique key becomes DELETE + INSERT, and all DELETEs of the transaction
come before the INSERTs, so that a swap of key values (``UPDATE t SET a = 3 WHERE a = 1;
UPDATE t SET a = 1 WHERE a = 2; UPDATE t SET a = 2 WHERE a = 3``) replays without a
duplicate-key error whatever order the consumer sees the changes in.

A binlog, unlike TiKV, records every intermediate row image: the same row can be inserted,
updated twice and moved to another key inside one transaction.  Hoisting the DELETE of a
later change above the INSERT of an earlier one would then lose or resurrect rows, so the
changes are first reduced to their net effect per *physical row*: a chain follows a row
from change to change (the before image of a change names the row the previous change
left at that key).  Each chain gives

- no change (inserted then deleted inside the transaction),
- INSERT of its final image, DELETE of its initial image,
- UPDATE initial -> final when neither the identity key nor a known NOT NULL unique key
  changed, else DELETE initial + INSERT final.

Output order: every DELETE (in order of the chain's first change), then the changes of
tables that cannot be chained (no key, or partial row images: binlog_row_image=MINIMAL/
NOBLOB) in their original order, then UPDATEs and INSERTs (in order of the chain's last
change).  After the DELETEs the table holds a subset of the final rows, so no later
INSERT or UPDATE can collide - the reason TiCDC sorts DELETEs first.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..reader import RowChange


@dataclass
class _Chain:
    first: RowChange         # first change of the chain
    last: RowChange          # last change
    first_seq: int
    last_seq: int
    initial: dict | None     # image before the transaction (None: the row did not exist)
    final: dict | None       # image after it (None: deleted)


def is_complete(row: dict | None, plan) -> bool:
    return row is not None and len(row) == len(plan.columns)


def key_of(row: dict, plan, indices) -> tuple | None:
    cols = plan.columns
    try:
        return tuple(row[cols[i].key] for i in indices)
    except KeyError:
        return None


def _hashable(value):
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def _k(row, plan, indices):
    key = key_of(row, plan, indices)
    return None if key is None else tuple(_hashable(v) for v in key)


def split_transaction(changes, keys_for) -> tuple[list, list, list]:
    """(deletes, passthrough, puts): the transaction as TiCDC would give it.

    ``keys_for(change) -> TableKeys``.  The three lists are to be applied in that order."""
    # Tables that cannot be chained in this transaction: no identity, or a partial image.
    unchainable = set()
    for ch in changes:
        name = (ch.db, ch.table)
        if name in unchainable:
            continue
        identity = keys_for(ch).identity
        if identity is None:
            unchainable.add(name)
            continue
        for image in (ch.before, ch.after):
            if image is not None and not is_complete(image, ch.plan):
                unchainable.add(name)
                break

    chains: list[_Chain] = []
    live: dict[tuple, _Chain] = {}
    passthrough = []
    for seq, ch in enumerate(changes):
        name = (ch.db, ch.table)
        if name in unchainable:
            passthrough.append(ch)
            continue
        identity = keys_for(ch).identity
        if ch.op == "insert":
            started = _Chain(ch, ch, seq, seq, None, ch.after)
            chains.append(started)
            live[(name, _k(ch.after, ch.plan, identity))] = started
            continue
        before_key = (name, _k(ch.before, ch.plan, identity))
        chain = live.pop(before_key, None)
        if chain is None:
            chain = _Chain(ch, ch, seq, seq, ch.before, ch.before)
            chains.append(chain)
        chain.last, chain.last_seq = ch, seq
        if ch.op == "update":
            chain.final = ch.after
            live[(name, _k(ch.after, ch.plan, identity))] = chain
        else:
            chain.final = None

    deletes, puts = [], []
    for chain in chains:
        first, last = chain.first, chain.last
        initial, final = chain.initial, chain.final
        if initial is None and final is None:
            continue
        if initial is None:
            puts.append((chain.last_seq, replace(last, op="insert", before=None, after=final)))
        elif final is None:
            deletes.append((chain.first_seq, replace(first, op="delete", before=initial, after=None)))
        elif _key_changed(initial, final, last, keys_for(last)):
            deletes.append((chain.first_seq, replace(first, op="delete", before=initial, after=None)))
            puts.append((chain.last_seq, replace(last, op="insert", before=None, after=final)))
        else:
            puts.append((chain.last_seq, replace(last, op="update", before=initial, after=final)))
    deletes.sort(key=lambda item: item[0])
    puts.sort(key=lambda item: item[0])
    return [d for _, d in deletes], passthrough, [p for _, p in puts]


def _key_changed(initial, final, change, keys) -> bool:
    plan = change.plan
    for key in (keys.identity, *keys.uniques):
        if key and _k(initial, plan, key) != _k(final, plan, key):
            return True
    return False


def split_changes(changes, keys_for) -> list:
    """The three lists of ``split_transaction`` concatenated."""
    deletes, passthrough, puts = split_transaction(changes, keys_for)
    return deletes + passthrough + puts
