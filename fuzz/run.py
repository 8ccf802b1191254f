"""Run an atheris harness on several processes and report what ran.

    python fuzz/run.py --seconds 600 --jobs 2            # time-bounded
    python fuzz/run.py --runs 1000000 --jobs 2           # input-bounded (split over jobs)
    python fuzz/run.py --target differential --sanitized /tmp/asan   # under ASan/UBSan

Targets: ``binlog`` (fuzz_binlog.py: any input ends in a BinlogError) and
``differential`` (fuzz_differential.py: compiled and pure paths agree; its corpus,
fuzz/corpus-differential, is seeded by differential.seed_inputs()) and ``protocol``
(fuzz_protocol.py: the client side of the wire protocol against any server bytes;
fuzz/corpus-protocol, seeded with whole sessions by protocol.seed_protocol()).  --sanitized DIR:
the extensions built by ``fuzz/sanitize.py build DIR``, under atheris's ASan runtime.
Each job is ``fuzz_<target>.py CORPUS -max_total_time=... -runs=...`` sharing one corpus
directory; crash/timeout/oom inputs land in --artifacts.  At the end the total number of
inputs executed (libFuzzer's stat::number_of_executed_units), the wall time and the
artifacts are printed; the exit status is 1 when there are artifacts.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=60, help="per job; 0 = no time limit")
    ap.add_argument("--runs", type=int, default=-1, help="inputs in all (split over jobs); -1 = no limit")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--target", choices=("binlog", "differential", "protocol"), default="binlog")
    ap.add_argument("--sanitized", metavar="DIR",
                    help="run with the ASan/UBSan builds of fuzz/sanitize.py build DIR (compiled walk on all jobs)")
    ap.add_argument("--corpus", default=None, help="default: fuzz/corpus (binlog), fuzz/corpus-differential")
    ap.add_argument("--artifacts", default=str(HERE / "artifacts"))
    ap.add_argument("--logs", default=str(HERE / "logs"))
    ap.add_argument("--max-len", type=int, default=4200)
    ap.add_argument("--timeout", type=int, default=10, help="seconds one input may take")
    ap.add_argument("--no-pure", action="store_true",
                    help="all jobs use the compiled row walk (default: odd jobs run BINLOG_PURE=1)")
    args = ap.parse_args()

    differential = args.target == "differential"
    corpus = Path(args.corpus or HERE / {"binlog": "corpus"}.get(args.target, f"corpus-{args.target}"))
    artifacts, logs = Path(args.artifacts), Path(args.logs)
    for d in (corpus, artifacts, logs):
        d.mkdir(parents=True, exist_ok=True)
    if not any(corpus.iterdir()):
        if differential:
            seed_differential(corpus)
        elif args.target == "protocol":
            from protocol import seed_protocol

            seed_protocol(corpus)
        else:
            subprocess.run([sys.executable, str(HERE / "make_seeds.py"), str(corpus)], check=True)
    base_env = dict(os.environ)
    if args.sanitized:
        import sanitize

        base_env = sanitize.runtime_env(Path(args.sanitized).resolve(), libfuzzer=True)
    before = set(artifacts.iterdir())
    started = time.monotonic()
    procs = []
    for job in range(args.jobs):
        cmd = [sys.executable, str(HERE / f"fuzz_{args.target}.py"), str(corpus),
               f"-max_len={args.max_len}", f"-timeout={args.timeout}", "-rss_limit_mb=3072",
               f"-artifact_prefix={artifacts}/", "-print_final_stats=1"]
        if args.seconds:
            cmd.append(f"-max_total_time={args.seconds}")
        if args.runs >= 0:
            cmd.append(f"-runs={-(-args.runs // args.jobs)}")
        log = open(logs / f"{args.target}-job{job}.log", "w")
        # Odd jobs fuzz the pure-Python row walk, even ones the compiled _speedups walk
        # (the differential target and sanitized runs: both, on every job).
        pure = job % 2 and not (args.no_pure or differential or args.sanitized)
        env = dict(base_env, BINLOG_PURE="1") if pure else base_env
        procs.append((subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), log))
    for proc, log in procs:
        proc.wait()
        log.close()
    elapsed = time.monotonic() - started
    total = 0
    for job in range(args.jobs):
        text = (logs / f"{args.target}-job{job}.log").read_text(errors="replace")
        found = re.findall(r"stat::number_of_executed_units:\s+(\d+)", text)
        total += int(found[-1]) if found else 0
    new = sorted(set(artifacts.iterdir()) - before)
    print(f"fuzz {args.target}{' (sanitized)' if args.sanitized else ''}: {total} inputs in "
          f"{elapsed:.0f} s on {args.jobs} job(s), "
          f"{len(new)} new artifact(s)")
    for path in new:
        print(f"fuzz:   {path}  (keep it in tests/hostile/regressions/ once understood)")
    return 1 if new else 0


def seed_differential(corpus: Path) -> None:
    import hashlib

    sys.path[:0] = [str(HERE.parent), str(HERE.parent / "tests")]
    import differential

    seeds = differential.seed_inputs()
    for seed in seeds:
        (corpus / f"seed-{hashlib.sha1(seed).hexdigest()[:16]}").write_bytes(seed)
    print(f"{len(seeds)} seeds in {corpus}")


if __name__ == "__main__":
    sys.exit(main())
