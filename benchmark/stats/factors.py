"""Exploratory factor analysis with varimax rotation, for ProMediate's Table 3 (PM-24).

The paper runs an EFA on the per-conversation metric vectors (CC, TLE, RL, ME, MI), keeps two factors,
rotates them by varimax and calls a loading salient when |λ| ≥ 0.40 (Liu et al. 2025, §4.3.2, Table 3).
It does not say how factors were extracted; its authors' code imports scikit-learn, whose
`FactorAnalysis` is a maximum-likelihood fit, so Parley fits by maximum likelihood too:

- Metrics are standardised, so the model is fitted to the correlation matrix R.
- Extraction: maximise the Gaussian likelihood of R = ΛΛᵀ + Ψ over the uniquenesses Ψ (Jöreskog 1967,
  "Some contributions to maximum likelihood factor analysis", Psychometrika 32:443-482). For a given
  Ψ the best Λ comes from the k largest eigenvalues θ of Ψ^-1/2 R Ψ^-1/2, and what is left to minimise
  is F(Ψ) = Σ_{j>k} (θ_j − ln θ_j − 1), done with L-BFGS-B and the analytic gradient, each ψ_i kept in
  [0.005, 1] (a uniqueness at the floor is a Heywood case and is noted).
- Rotation: varimax (Kaiser 1958, "The varimax criterion for analytic rotation in factor analysis",
  Psychometrika 23:187-200) by Kaiser's pairwise rotations, without his row normalisation, as
  scikit-learn does (`kaiser_normalise=True` for the normalised form).
- Factors are ordered by their sum of squared loadings, largest first, and each is signed so that its
  largest absolute loading is positive (factors are defined up to order and sign only).

Parley's own code, because scikit-learn is only a test dependency here (via pingouin) and the report
needs the uniquenesses, the Heywood notes and the salient flags; the tests check it against
`sklearn.decomposition.FactorAnalysis(rotation="varimax")`.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize

METHOD = (
    "exploratory factor analysis of the standardised metrics: maximum-likelihood extraction (Joreskog 1967), "
    "{rotation}; salient loading |lambda| >= {salient:.2f}"
)
_PSI_FLOOR = 0.005


@dataclass
class FactorLoadings:
    """Rotated loadings (metrics × factors), salient flags and uniquenesses; None with notes when not estimable."""

    metrics: list[str]
    loadings: list[list[float]] | None
    salient: list[list[bool]] | None
    uniquenesses: list[float] | None
    method: str
    n: int
    excluded: int = 0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "metrics": self.metrics,
            "loadings": self.loadings,
            "salient": self.salient,
            "uniquenesses": self.uniquenesses,
            "method": self.method,
            "n": self.n,
            "excluded": self.excluded,
            "notes": self.notes,
        }


def _loadings_for(psi: np.ndarray, corr: np.ndarray, n_factors: int) -> np.ndarray:
    """The ML loadings given uniquenesses: Λ = Ψ^1/2 U_k diag(√max(θ_k − 1, 0))."""
    root = np.sqrt(psi)
    theta, vectors = np.linalg.eigh(corr / np.outer(root, root))
    order = np.argsort(theta)[::-1][:n_factors]
    return root[:, None] * vectors[:, order] * np.sqrt(np.maximum(theta[order] - 1, 0))


def _ml_fit(corr: np.ndarray, n_factors: int) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood uniquenesses and (unrotated) loadings for a correlation matrix."""
    p = corr.shape[0]

    def objective(psi: np.ndarray) -> tuple[float, np.ndarray]:
        root = np.sqrt(psi)
        theta = np.linalg.eigvalsh(corr / np.outer(root, root))
        rest = np.sort(theta)[: p - n_factors]
        value = float(np.sum(rest - np.log(rest) - 1))
        loadings = _loadings_for(psi, corr, n_factors)
        residual = loadings @ loadings.T + np.diag(psi) - corr
        return value, np.diag(residual) / psi**2

    start = np.clip((1 - 0.5 * n_factors / p) / np.diag(np.linalg.pinv(corr)), _PSI_FLOOR, 1)
    fit = minimize(
        objective,
        start,
        jac=True,
        method="L-BFGS-B",
        bounds=[(_PSI_FLOOR, 1.0)] * p,
        options={"maxiter": 10_000, "ftol": 1e-15, "gtol": 1e-12},
    )
    return fit.x, _loadings_for(fit.x, corr, n_factors)


def varimax(
    loadings: np.ndarray, *, kaiser_normalise: bool = False, tol: float = 1e-14, max_sweeps: int = 1000
) -> np.ndarray:
    """Loadings rotated orthogonally to maximise the variance of squared loadings within factors (Kaiser 1958).

    Kaiser's own algorithm: each pair of factors in turn is rotated by the angle that maximises the
    criterion for that pair, φ = ¼ atan2(D − 2AB/p, C − (A² − B²)/p) with u = x_j² − x_m², v = 2 x_j x_m,
    A = Σu, B = Σv, C = Σ(u² − v²), D = 2Σuv (Harman 1976, Modern Factor Analysis, §14.4), sweeping
    until no angle exceeds `tol`. It reaches the same optimum as the SVD iteration scikit-learn uses,
    which can oscillate between two rotations of equal criterion on perfectly symmetric loadings.
    """
    loadings = np.asarray(loadings, dtype=float)
    rows, k = loadings.shape
    norms = np.sqrt((loadings**2).sum(axis=1)) if kaiser_normalise else np.ones(rows)
    norms[norms == 0] = 1
    x = loadings / norms[:, None]
    for _ in range(max_sweeps):
        largest = 0.0
        for j, m in combinations(range(k), 2):
            u = x[:, j] ** 2 - x[:, m] ** 2
            v = 2 * x[:, j] * x[:, m]
            a, b = u.sum(), v.sum()
            c, d = (u**2 - v**2).sum(), 2 * (u * v).sum()
            angle = 0.25 * np.arctan2(d - 2 * a * b / rows, c - (a**2 - b**2) / rows)
            if abs(angle) > tol:
                cos, sin = np.cos(angle), np.sin(angle)
                x[:, j], x[:, m] = x[:, j] * cos + x[:, m] * sin, -x[:, j] * sin + x[:, m] * cos
            largest = max(largest, abs(angle))
        if largest <= tol:
            break
    return x * norms[:, None]


def _canonical(loadings: np.ndarray) -> np.ndarray:
    """Factors in decreasing order of their sum of squared loadings, each with its largest |λ| positive."""
    order = np.argsort(-(loadings**2).sum(axis=0), kind="stable")
    loadings = loadings[:, order]
    signs = np.sign(loadings[np.abs(loadings).argmax(axis=0), np.arange(loadings.shape[1])])
    signs[signs == 0] = 1
    return loadings * signs


def factor_analysis(
    table: pd.DataFrame | Mapping[str, Sequence[float | None]],
    *,
    n_factors: int = 2,
    rotation: str = "varimax",
    salient: float = 0.40,
    kaiser_normalise: bool = False,
) -> FactorLoadings:
    """EFA of per-conversation metrics (rows = conversations, columns = metrics), as in ProMediate's Table 3.

    Rows with a missing or non-finite value are dropped and counted. When the data cannot carry the
    model (fewer conversations than metrics + 1, a metric that never varies, more factors than the
    metrics identify) the loadings are None and a note says why.
    """
    if rotation not in ("varimax", "none"):
        raise ValueError(f"rotation must be one of varimax, none; got {rotation!r}")
    if isinstance(n_factors, bool) or not isinstance(n_factors, int) or n_factors < 1:
        raise ValueError(f"n_factors must be a whole number ≥ 1; got {n_factors!r}")
    frame = pd.DataFrame(table).apply(pd.to_numeric, errors="coerce").astype(float)
    metrics = [str(column) for column in frame.columns]
    if rotation == "varimax":
        rotated = "varimax rotation (Kaiser 1958)" + (" with Kaiser normalisation" if kaiser_normalise else "")
    else:
        rotated = "no rotation"
    method = METHOD.format(rotation=rotated, salient=salient)
    finite = np.isfinite(frame.to_numpy()).all(axis=1)
    data = frame.to_numpy()[finite]
    result = FactorLoadings(metrics, None, None, None, method, int(len(data)), int((~finite).sum()))
    if result.excluded:
        result.notes.append(f"{result.excluded} conversations with a missing metric left out")
    p = len(metrics)
    if (p - n_factors) ** 2 < p + n_factors:
        result.notes.append(f"{n_factors} factors are not identified by {p} metrics")
        return result
    if len(data) <= p:
        result.notes.append(f"needs more conversations than metrics ({p}); has {len(data)}")
        return result
    constant = [metric for metric, sd in zip(metrics, data.std(axis=0), strict=True) if sd == 0]
    if constant:
        result.notes.append(f"metrics that never vary cannot be analysed: {', '.join(constant)}")
        return result
    corr = np.corrcoef(data, rowvar=False)
    psi, loadings = _ml_fit(corr, n_factors)
    if rotation == "varimax":
        loadings = varimax(loadings, kaiser_normalise=kaiser_normalise)
    loadings = _canonical(loadings)
    heywood = [metric for metric, value in zip(metrics, psi, strict=True) if value <= _PSI_FLOOR * (1 + 1e-6)]
    if heywood:
        result.notes.append(
            f"Heywood case: uniqueness held at its floor {_PSI_FLOOR} for {', '.join(heywood)} "
            "(the factor explains that metric almost entirely)"
        )
    result.loadings = loadings.tolist()
    result.salient = (np.abs(loadings) >= salient).tolist()
    result.uniquenesses = psi.tolist()
    return result
