"""Many tables' searches taking turns, so that what they ask to be scored is scored in
few passes.

A search asks for a few candidates on a table's hands at a time, and a pass costs more
than a small table's hands do: 2,000 tables searched one after another make tens of
thousands of passes. Here each search runs in a thread of its own, one thread at a time
(the others wait for their turn): a search that asks for hands not yet scored holds its
asks and waits, the next search runs, and once every search waits or is done, all the
asks held are scored in one pass (`Pool.score_each`), and each search goes on from where
it waited. A search finds what it finds alone: a hand's divergences under a candidate
do not depend on the hands scored with it, and nothing else is shared but what is made
once from the same inputs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from pipeline.core.rules import Profile
from pipeline.engine.pool import Ints, Pool

T = TypeVar("T")


class Turns:
    """Jobs run by `searches` threads taking turns, their scoring asks held and scored
    together (`run`)."""

    def __init__(self, pool: Pool, searches: int) -> None:
        self.pool = pool
        self.searches = searches
        self.asks: list[tuple[Profile, Ints]] = []
        self.waiting: list[threading.Semaphore] = []  # the searches that wait for a pass
        self.yielded = threading.Semaphore(0)  # the search running waits, or is done
        self.mine = threading.local()

    def run(self, jobs: Sequence[Callable[[], T]]) -> list[T]:
        """Each job's outcome, in order. The jobs run in turns while the pool's scoring
        is deferred to the passes; an error in one is raised once all have stopped."""
        out: dict[int, T] = {}
        errors: list[BaseException] = []
        todo = iter(enumerate(jobs))
        turns = [threading.Semaphore(0) for _ in range(min(self.searches, len(jobs)))]
        threads = [
            threading.Thread(target=self._search, args=(turn, todo, out, errors), daemon=True)
            for turn in turns
        ]
        self.pool.defer = self._defer
        try:
            for thread in threads:
                thread.start()
            ready = turns
            while ready:
                for turn in ready:  # each runs until it waits for a pass, or is done
                    turn.release()
                    self.yielded.acquire()
                ready, self.waiting = self.waiting, []
                asks, self.asks = self.asks, []
                self.pool.score_each(asks)  # (from this thread: now)
        finally:
            self.pool.defer = None
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        return [out[k] for k in range(len(jobs))]

    def _search(
        self,
        turn: threading.Semaphore,
        todo: Iterator[tuple[int, Callable[[], T]]],
        out: dict[int, T],
        errors: list[BaseException],
    ) -> None:
        """One thread: the next job while there is one (taken in its turn)."""
        self.mine.turn = turn
        turn.acquire()
        try:
            for k, job in todo:
                out[k] = job()
        except BaseException as error:  # (raised by `run`, in the main thread)
            errors.append(error)
        finally:
            self.yielded.release()

    def _defer(self, asks: Sequence[tuple[Profile, Ints]]) -> bool:
        """From a search: hold its asks of hands not yet scored and wait for the pass
        (True; at once when there are none); from elsewhere, False: score them now."""
        turn: threading.Semaphore | None = getattr(self.mine, "turn", None)
        if turn is None:
            return False
        held = [(profile, self.pool.unscored(profile, hands)) for profile, hands in asks]
        held = [(profile, hands) for profile, hands in held if len(hands)]
        if held:
            self.asks += held
            self.waiting.append(turn)
            self.yielded.release()
            turn.acquire()
        return True
