"""`may_split` leaves out of a table's split search only candidates that cannot take part
in the split `best_split` finds: on random tables of hands (a best whole fit, rules
changed part way, rules that came and went, faults that some candidates fit by chance),
the split found among the candidates kept is the one found among all of them. And
`may_divide` says no split where `best_split` finds none among any candidates, whose
bound is as tight as it can be."""

from __future__ import annotations

import numpy as np

from pipeline.core.inference import (
    Split,
    best_split,
    candidate,
    least_gain,
    may_divide,
    may_split,
)
from pipeline.core.rules import GAMES

TAIWANESE = next(i for i, v in enumerate(GAMES) if v.name == "taiwanese")


def _table(rng: np.random.Generator) -> np.ndarray:
    """Per candidate (the first the best whole fit), the hands it fits."""
    n = int(rng.integers(20, 400))
    k = int(rng.integers(2, 9))
    base = rng.random(n) > rng.uniform(0.0, 0.12)  # the best's faults
    flags = np.tile(base, (k, 1))
    for c in range(1, k):
        kind = rng.integers(0, 3)
        if kind == 0:  # some other rules: they fit a stretch the best misses
            i, j = sorted(rng.integers(0, n + 1, size=2).tolist())
            flags[c, i:j] = rng.random(j - i) > 0.05
            flags[c, :i] &= rng.random(i) > rng.uniform(0, 0.6)
            flags[c, j:] &= rng.random(n - j) > rng.uniform(0, 0.6)
        else:  # a neighbour: it fits a few faulty hands by chance, and misses a few
            flags[c] = np.where(rng.random(n) < rng.uniform(0, 0.05), ~base, base)
    best = int(flags.sum(axis=1).argmax())
    return np.concatenate([flags[best : best + 1], np.delete(flags, best, axis=0)])


def _outcome(split: Split | None, flags: dict[str, np.ndarray]) -> tuple[int, int, int, int]:
    """Where it divides and how many hands each side's rules fit there (of equal fits,
    which one is named may differ)."""
    if split is None:
        return (-1, -1, -1, -1)
    before = int(flags[split.before.digest][: split.at].sum())
    after = int(flags[split.after.digest][split.at :].sum())
    return split.at, split.exact, before, after


def test_the_candidates_left_out_never_change_the_split_found() -> None:
    rng = np.random.default_rng(7)
    profiles = [candidate(TAIWANESE, {"home_run_bonus": b}) for b in range(0, 18, 2)]
    left_out = splits = 0
    for _ in range(20000):
        table = _table(rng)
        single = int(table[0].sum())
        exact = {p.digest: (p, row) for p, row in zip(profiles, table, strict=False)}
        by_digest = {d: row for d, (_, row) in exact.items()}
        misses = ~table[0]
        gains = {d: int(row[misses].sum()) for d, row in by_digest.items()}
        kept = may_split(gains, 0, table.shape[1])
        ours = {d: exact[d] for d in exact if d in kept or d == profiles[0].digest}
        left_out += len(exact) - len(ours)
        everything = best_split(exact, single)
        splits += everything is not None
        assert _outcome(best_split(ours, single), by_digest) == _outcome(everything, by_digest)
    assert left_out > 1000 and splits > 100  # the bound left candidates out; tables split


def test_no_split_is_found_where_too_few_missed_hands_may_be_exact() -> None:
    """Most hands the best misses are made exact by no candidate (faults no rules explain),
    a few by some; the best's count leaves `slack` hands out."""
    rng = np.random.default_rng(11)
    profiles = [candidate(TAIWANESE, {"home_run_bonus": b}) for b in range(0, 18, 2)]
    bounded = at_the_bound = 0
    for _ in range(20000):
        table = _table(rng)
        missed = np.flatnonzero(~table[0])
        fittable = rng.permutation(missed)[: int(rng.integers(0, 6))]
        never = np.setdiff1d(missed, fittable)
        table[:, never] = False
        table = table[np.argsort(-table.sum(axis=1), kind="stable")]
        slack = int(rng.integers(0, 3))
        n = table.shape[1]
        exact = {p.digest: (p, row) for p, row in zip(profiles, table, strict=False)}
        found = best_split(exact, int(table[0].sum()) - slack)
        fits = len(np.setdiff1d(np.flatnonzero(~table[0]), never))
        if not may_divide(fits, slack, n):
            bounded += 1
            assert found is None
        elif fits + slack == least_gain(n) and found is not None:
            at_the_bound += 1  # one hand fewer, and this split would be lost
    assert bounded > 5000 and at_the_bound > 20
