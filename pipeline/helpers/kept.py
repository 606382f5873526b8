"""A bounded memo: the last values made, by key, for work asked again and again (the
rules of a profile, its neighbours in a search) whose inputs are never changed."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Kept(Generic[V]):
    """The values of the last `size` keys asked for; the least recently asked is dropped
    first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.values: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value kept for `key`, else `make()` kept."""
        if key in self.values:
            self.values.move_to_end(key)
            return self.values[key]
        value = self.values[key] = make()
        if len(self.values) > self.size:
            self.values.popitem(last=False)
        return value
