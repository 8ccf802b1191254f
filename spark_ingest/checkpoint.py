"""``DIR/_checkpoint/``: what was ingested, for incremental runs.

``state.json`` (replaced atomically at the end of each run)::

    {"format": 1, "runs": 3,
     "files": {"/abs/path/mariadb-bin.000042": {"name": ..., "size": ..., "end": ...,
               "closed": true, "head": "<hex of the first 256 bytes>", "run": 3,
               "damaged": null | {error record}}},
     "tracked_ddl": {schema store snapshot of the DDL seen in the binlogs}}

``end`` is where the next run continues: the end of the file for a closed one (ROTATE
or STOP at its end), the end of the last whole transaction for one still being written.
``runs/<N>.json`` is each run's summary; ``inflight.json`` marks a run that has started
writing and not committed - the next run first deletes that run's output (everything
under ``run=<N>`` / ``_run=<N>``), so a crashed run leaves no duplicates.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

FORMAT = 1


class Checkpoint:
    def __init__(self, out_dir: Path):
        self.out = Path(out_dir)
        self.dir = self.out / "_checkpoint"

    # -- state ------------------------------------------------------------------------
    def load(self) -> dict:
        path = self.dir / "state.json"
        if not path.exists():
            return {"format": FORMAT, "runs": 0, "files": {}, "tracked_ddl": None}
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"{path}: unknown checkpoint format {data.get('format')!r}")
        return data

    def save(self, state: dict) -> None:
        _write_atomic(self.dir / "state.json", json.dumps(state, indent=1, sort_keys=True))

    def save_run(self, run: int, summary: dict) -> None:
        _write_atomic(self.dir / "runs" / f"{run:06d}.json", json.dumps(summary, indent=1, sort_keys=True))

    # -- in-flight runs ---------------------------------------------------------------
    def begin(self, run: int) -> None:
        _write_atomic(self.dir / "inflight.json", json.dumps({"run": run, "started": time.time()}))

    def end(self) -> None:
        (self.dir / "inflight.json").unlink(missing_ok=True)

    def inflight(self) -> int | None:
        path = self.dir / "inflight.json"
        if not path.exists():
            return None
        return int(json.loads(path.read_text(encoding="utf-8"))["run"])

    def discard_run(self, run: int) -> list[str]:
        """Delete every output directory of ``run`` (a run that did not commit); in Delta
        tables (``--format delta``), its rows."""
        removed = []
        if (self.out / "_staging").exists() or (self.out / "changes" / "_delta_log").is_dir():
            from .delta import discard_run

            removed += discard_run(self.out, run)
        for base, name in ((self.out / "changes", f"run={run}"), (self.out / "errors", f"run={run}")):
            target = base / name
            if target.exists():
                shutil.rmtree(target)
                removed.append(str(target))
        tables = self.out / "tables"
        if tables.is_dir():
            for table_dir in tables.iterdir():
                target = table_dir / f"_run={run}"
                if target.exists():
                    shutil.rmtree(target)
                    removed.append(str(target))
        (self.dir / "runs" / f"{run:06d}.json").unlink(missing_ok=True)
        return removed


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
