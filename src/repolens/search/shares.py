"""The share of a question's weight that a set of its words holds, as the
learned ranking's features count it (:mod:`.pinpoint`'s terms, :mod:`.related`'s
related words)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping


class Shares:
    """The share of the total of ``weights`` that a set of their words holds
    (exactly rounded, :func:`math.fsum`: the same bits whatever order the set
    lists them in), each distinct set summed once: a search asks ~600, half
    of them new."""

    def __init__(self, weights: Mapping[str, float]) -> None:
        self.weights, self.total = weights, math.fsum(weights.values())
        self._known: dict[frozenset[str], float] = {}

    def each(self, sets: Iterable[frozenset[str]]) -> list[float]:
        """The share of each of ``sets`` (0 when the weights total 0)."""
        known, weights, total = self._known, self.weights, self.total
        out = []
        for found in sets:
            value = known.get(found)
            if value is None:
                held = [weights[t] for t in found if t in weights]
                value = known[found] = math.fsum(held) / total if total else 0.0
            out.append(value)
        return out
