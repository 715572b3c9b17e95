"""ProMediate's tables, from per-conversation metric values (PM-22, PM-25): a Table 1 cell with its
scenario-clustered confidence interval, and the ME–MI correlation at the intervention level."""

import math
import statistics
from collections.abc import Sequence
from typing import Any

from scipy import stats as scipy_stats

from .bootstrap import DEFAULT_RESAMPLES, Seed, clustered_mean


def table_cell(
    values: Sequence[float | None],
    scenarios: Sequence[str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: Seed = 0,
) -> dict[str, Any]:
    """A Table 1 cell: mean over conversations with n, SE and a 95 % cluster-bootstrap CI over scenarios.

    Undefined (None) and infinite values are left out and counted in `excluded` (the paper does not
    say how undefined per-conversation values enter its means, spec §5 item 7). SE = sample standard
    deviation / √n (None below 2); the CI resamples scenarios (`bootstrap.clustered_mean`).
    """
    if len(values) != len(scenarios):
        raise ValueError(f"one scenario per value needed: {len(values)} values, {len(scenarios)} scenarios")
    keep = [v is not None and math.isfinite(v) for v in values]
    kept = [float(v) for v, ok in zip(values, keep, strict=True) if ok]
    kept_scenarios = [s for s, ok in zip(scenarios, keep, strict=True) if ok]
    cell = clustered_mean(kept, kept_scenarios, resamples=resamples, seed=seed)
    cell["se"] = statistics.stdev(kept) / math.sqrt(len(kept)) if len(kept) >= 2 else None
    cell["excluded"] = len(values) - len(kept)
    return cell


def me_mi_spearman(me_parts: Sequence[float | None], mi_parts: Sequence[float | None]) -> dict[str, Any]:
    """Spearman's ρ and two-sided p between ME and MI over interventions where both are defined (Fig. 4)."""
    if len(me_parts) != len(mi_parts):
        raise ValueError(f"ME and MI must list the same interventions: {len(me_parts)} vs {len(mi_parts)}")
    pairs = [(me, mi) for me, mi in zip(me_parts, mi_parts, strict=True) if me is not None and mi is not None]
    out: dict[str, Any] = {"rho": None, "p": None, "n": len(pairs), "note": ""}
    if len(pairs) < 3:
        out["note"] = f"needs at least 3 interventions with both values; has {len(pairs)}"
        return out
    me_values, mi_values = zip(*pairs, strict=True)
    if len(set(me_values)) < 2 or len(set(mi_values)) < 2:
        out["note"] = "undefined: one of the two variables is constant"
        return out
    result = scipy_stats.spearmanr(me_values, mi_values)
    out["rho"], out["p"] = float(result.statistic), float(result.pvalue)
    return out
