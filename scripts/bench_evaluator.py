"""Evaluations per second of the vectorized evaluator, beside phevaluator on the same rows.

Run: make bench-eval (or .venv/bin/python scripts/bench_evaluator.py --rows 1000000).
Each figure is the median of --repeat runs; phevaluator is timed on a sample of the
same rows (its per-call cost does not depend on the row count) unless --full.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from pipeline.core.evaluator import Plays, evaluate, read_boards, tables
from pipeline.core.evaluator.deal import deal

KINDS = {"top": (1, Plays.ANY), "middle": (2, Plays.ANY), "bottom": (4, Plays.EXACTLY_TWO)}


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def phevaluator_calls(
    kind: str, rows: np.ndarray, boards: np.ndarray
) -> tuple[Callable[[], object], Callable[[], object]]:
    """Loops calling phevaluator's C module directly and through its public API."""
    from phevaluator import _pheval, evaluate_cards, evaluate_omaha_cards

    r = rows.tolist()
    b = boards.tolist()
    if kind == "bottom":
        c_fn, api = _pheval.evaluate_omaha_cards, evaluate_omaha_cards
        return (
            lambda: [c_fn(*bb, *rr) for rr, bb in zip(r, b, strict=True)],
            lambda: [api(*bb, *rr) for rr, bb in zip(r, b, strict=True)],
        )
    c_fn = _pheval.evaluate_6cards if kind == "top" else _pheval.evaluate_7cards
    return (
        lambda: [c_fn(*rr, *bb) for rr, bb in zip(r, b, strict=True)],
        lambda: [evaluate_cards(*rr, *bb) for rr, bb in zip(r, b, strict=True)],
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sample", type=int, default=200_000, help="rows timed for phevaluator")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)

    t = time.perf_counter()
    tables.holdem_rank_tables(1), tables.holdem_rank_tables(2), tables.omaha_rank_tables()
    tables.holdem_flush_tables(), tables.omaha_flush_tables()
    build = time.perf_counter() - t
    print(
        f"# evaluator benchmark: {a.rows:,} rows per kind, median of {a.repeat}, "
        f"{platform.machine()} {platform.python_version()}, numpy {np.__version__}"
    )
    print(f"tables built in {build:.2f} s")
    print(
        f"{'row kind':<16}{'handaudit M/s':>14}{'with boards M/s':>17}"
        f"{'pheval C M/s':>14}{'pheval API M/s':>16}{'joker cost':>12}"
    )
    for kind, (size, plays) in KINDS.items():
        plain_rate = 0.0
        for jokers in range(0, min(size, 2) + 1):
            rows, boards = deal(rng, a.rows, size, jokers=jokers)
            features = read_boards(boards)
            fast = median_seconds(partial(evaluate, rows, features, plays=plays), a.repeat)
            full = median_seconds(partial(evaluate, rows, boards, plays=plays), a.repeat)
            rate = a.rows / fast / 1e6
            label = kind if jokers == 0 else f"{kind} +{jokers} joker"
            if jokers == 0:
                plain_rate = rate
                n = min(a.sample, a.rows)
                c_loop, api_loop = phevaluator_calls(kind, rows[:n], boards[:n])
                c_rate = n / median_seconds(c_loop, 3) / 1e6
                api_rate = n / median_seconds(api_loop, 1) / 1e6
                print(
                    f"{label:<16}{rate:>14.1f}{a.rows / full / 1e6:>17.1f}"
                    f"{c_rate:>14.2f}{api_rate:>16.2f}{'1.0x':>12}",
                    flush=True,
                )
            else:
                print(
                    f"{label:<16}{rate:>14.1f}{a.rows / full / 1e6:>17.1f}{'':>14}{'':>16}"
                    f"{plain_rate / rate:>11.1f}x",
                    flush=True,
                )


if __name__ == "__main__":
    main()
