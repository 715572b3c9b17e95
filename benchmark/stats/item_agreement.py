"""How far the ratings of one item agree, question by question: what a curator reads before adjudicating.

Pure: plain values in, a dataclass out. For any kind, the **share agreeing** is the share of ratings equal to
the most frequent value (the plurality), and the **pairwise agreement** is Fleiss' (1971) P_i, the share of
agreeing ordered pairs among the item's m ratings, ``(sum_j n_ij^2 - m) / (m (m - 1))``, the per-item term
of Fleiss' kappa (``kappa.percent_agreement_from_counts`` on one item). For numeric answers the **spread** is
the range (highest minus lowest) and ``sd`` the sample standard deviation (n - 1), as in the ICC's
within-item variance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from .kappa import percent_agreement_from_counts


@dataclass(frozen=True)
class ItemAgreement:
    ratings: int
    distinct: int
    share_agreeing: float | None  # the plurality value's share of the ratings; None without ratings
    pairwise: float | None  # Fleiss' P_i; None with fewer than two ratings
    mean: float | None = None  # numeric answers only
    sd: float | None = None  # numeric answers with two ratings or more
    spread: float | None = None  # numeric answers only: highest minus lowest

    @property
    def agrees(self) -> bool:
        """Every rating gives the same answer (trivially so with one rating)."""
        return self.distinct <= 1


def item_agreement(values: Sequence[Hashable], *, numbers: Sequence[float] | None = None) -> ItemAgreement:
    """The agreement of one item's ratings of one question about one target.

    ``values`` are the answers as comparable values (a multi-label answer as one tuple of its labels);
    ``numbers`` the same answers as numbers, for a numeric question.
    """
    counts = Counter(values)
    n = len(values)
    share = max(counts.values()) / n if n else None
    pairwise = percent_agreement_from_counts([list(counts.values())]) if n >= 2 else None
    if not numbers:
        return ItemAgreement(n, len(counts), share, pairwise)
    array = np.asarray(numbers, dtype=float)
    sd = float(array.std(ddof=1)) if len(array) >= 2 else None
    return ItemAgreement(
        n, len(counts), share, pairwise, mean=float(array.mean()), sd=sd, spread=float(array.max() - array.min()),
    )
