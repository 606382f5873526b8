"""Hands per second of ingest and validation, from JSON Lines and from Parquet, and peak memory.

Run: .venv/bin/python scripts/bench_ingest.py [--hands 100000 300000]
Input: the clean examples of fixtures/examples, repeated with fresh hand ids to the sizes asked.
Each measurement runs in a fresh process (so its peak RSS is its own), one core.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "fixtures" / "examples" / "clean" / "hands.jsonl"


def make_inputs(hands: int, out: Path) -> tuple[Path, Path]:
    jsonl = out / f"ingest-{hands}.jsonl"
    parquet = out / f"ingest-{hands}.parquet"
    if jsonl.exists() and parquet.exists():
        return jsonl, parquet
    base = [json.loads(line) for line in EXAMPLES.read_text().splitlines()]
    with jsonl.open("w") as f:
        for i in range(hands):
            h = dict(base[i % len(base)])
            copy = i // len(base)
            h["hand_id"] = f"{h['hand_id']}-{copy}"
            h["table_id"] = f"{h['table_id']}-{copy}"
            f.write(json.dumps(h) + "\n")
    from pipeline.ingest.decode import decode_lines, schema
    from pipeline.ingest.sources import read_blocks

    writer = pq.ParquetWriter(parquet, schema())
    for block in read_blocks(jsonl):
        writer.write_table(decode_lines(block).table)  # type: ignore[arg-type]
    writer.close()
    return jsonl, parquet


def measure(path: Path) -> None:
    """In this process: read and validate every hand of `path`; print one JSON line."""
    from pipeline.engine.parallel import audit_blocks
    from pipeline.helpers.stages import NO_STAGES
    from pipeline.ingest import Accounting, blocks, input_files

    started = time.perf_counter()
    accounting = Accounting()
    for read in audit_blocks(blocks(input_files([path])), 1, NO_STAGES, audit=False):
        accounting.add(read.verified, read.rejects)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "hands": accounting.verified,
                "quarantined": accounting.quarantined,
                "seconds": seconds,
                "peak_mb": peak,
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hands", type=int, nargs="+", default=[100_000, 300_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench")
    ap.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.measure:
        measure(a.measure)
        return
    a.out.mkdir(exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "POLARS_MAX_THREADS": "1"}
    print(f"{'input':<28}{'hands':>10}{'hands/s (median)':>18}{'peak RSS MB':>13}")
    for hands in a.hands:
        for path in make_inputs(hands, a.out):
            runs = []
            for _ in range(a.repeat):
                out = subprocess.run(
                    ["taskset", "-c", "0", sys.executable, __file__, "--measure", str(path)],
                    capture_output=True,
                    text=True,
                    check=True,
                    env=env,
                )
                runs.append(json.loads(out.stdout))
            rate = statistics.median(r["hands"] / r["seconds"] for r in runs)
            peak = max(r["peak_mb"] for r in runs)
            print(f"{path.name:<28}{runs[0]['hands']:>10,}{rate:>18,.0f}{peak:>13.0f}", flush=True)


if __name__ == "__main__":
    main()
