"""Agreement statistics for Parley's reports: plain tables in, plain results out, no Django.

Each module holds one family of statistics, with its formula and reference in the docstrings:
`icc` (intraclass correlations), `kappa` (Fleiss, Randolph, Cohen, percent agreement, binned
kappas), `alpha` (Krippendorff), `accuracy` (accuracy against a truth with a cluster bootstrap),
`alignment` (humans vs an automated judge, means per condition), `mace` (MACE: annotators'
competence, Hovy et al. 2013), `annotator_agreement` (each annotator's agreement with the others
and with gold), `spans` (SHREC span agreement), `unitizing` (Krippendorff's unitizing alpha of
spans), `shrec` (SHREC's task scores), `promediate` (ProMediate's consensus series and mediator metrics), `factors`
(exploratory factor analysis), `interpretation` (verbal labels), `tables` (the long-format input) and `report`
(everything for each question of a study).

Computed by kept libraries where one fits the design: Krippendorff's alpha by the `krippendorff`
package, distributions and Spearman's rho by scipy. The rest is Parley's own because no kept
library covers the design (items with unequal numbers of ratings, cluster bootstraps, SHREC's span
pairing); each such module says why in its docstring.
"""

from .accuracy import Accuracy, cluster_bootstrap_accuracy
from .alignment import (
    Alignment,
    alignment_from_scores,
    fisher_z_interval,
    judge_alignment,
    mean_interval,
    means_by_condition,
)
from .alpha import Alpha, krippendorff_alpha, krippendorff_alpha_from_counts
from .icc import (
    OnewayIcc,
    TwowayIcc,
    icc_oneway,
    icc_oneway_from_codes,
    icc_oneway_from_f,
    icc_twoway,
    icc_twoway_from_matrix,
)
from .interpretation import cicchetti, landis_koch
from .kappa import (
    Kappa,
    binned_kappas,
    cohen_kappa,
    cohen_kappa_from_table,
    fleiss_kappa,
    fleiss_kappa_from_counts,
    percent_agreement,
    percent_agreement_from_counts,
    randolph_kappa,
    randolph_kappa_from_counts,
)
from .report import agreement_report, question_report, span_question_report
from .spans import SpanAgreement, span_agreement
from .tables import category_counts, equal_width_bins, long_from_wide, usable_ratings

__all__ = [
    "Accuracy",
    "Alignment",
    "Alpha",
    "Kappa",
    "OnewayIcc",
    "SpanAgreement",
    "TwowayIcc",
    "agreement_report",
    "alignment_from_scores",
    "binned_kappas",
    "category_counts",
    "cicchetti",
    "cluster_bootstrap_accuracy",
    "cohen_kappa",
    "cohen_kappa_from_table",
    "equal_width_bins",
    "fisher_z_interval",
    "fleiss_kappa",
    "fleiss_kappa_from_counts",
    "icc_oneway",
    "icc_oneway_from_codes",
    "icc_oneway_from_f",
    "icc_twoway",
    "icc_twoway_from_matrix",
    "judge_alignment",
    "krippendorff_alpha",
    "krippendorff_alpha_from_counts",
    "landis_koch",
    "long_from_wide",
    "mean_interval",
    "means_by_condition",
    "percent_agreement",
    "percent_agreement_from_counts",
    "question_report",
    "randolph_kappa",
    "randolph_kappa_from_counts",
    "span_agreement",
    "span_question_report",
    "usable_ratings",
]
