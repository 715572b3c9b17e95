"""Published reference datasets, typed in from their sources (cited per dataset)."""

import numpy as np

# Shrout & Fleiss (1979), "Intraclass correlations: uses in assessing rater reliability",
# Psychological Bulletin 86(2):420-428, Table 2: 6 targets (rows) rated by 4 judges (columns).
# Published (Table 4): ICC(1,1) .17, ICC(2,1) .29, ICC(3,1) .71, ICC(1,4) .44, ICC(2,4) .62,
# ICC(3,4) .91; Table 3 mean squares: between targets 11.24, within targets 6.26, between
# judges 32.49, residual 1.02.
SHROUT_FLEISS = np.array(
    [
        [9, 2, 5, 8],
        [6, 1, 3, 2],
        [8, 4, 6, 8],
        [7, 1, 2, 6],
        [10, 5, 6, 9],
        [6, 2, 4, 7],
    ]
)

# Fleiss (1971), "Measuring nominal scale agreement among many raters", Psychological Bulletin
# 76(5):378-382, Table 1: 30 patients, 6 psychiatrists each, 5 diagnoses (1 depression,
# 2 personality disorder, 3 schizophrenia, 4 neurosis, 5 other); kappa = .430. As distributed in
# the R package irr (`diagnoses`), one row per patient, one column per rating.
FLEISS_1971 = np.array(
    [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ]
)

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects x 5 categories, 14 raters per subject
# (counts n_ij); kappa = 0.210, P = 0.378, P_e = 0.213.
FLEISS_WIKIPEDIA_COUNTS = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers
# (rows) x 12 units (columns), NaN where an observer gave no value. Published: nominal .743,
# ordinal .815, interval .849.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
        [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
    ]
)

# Wikipedia, "Cohen's kappa", first worked example: 50 grant proposals read by A (rows) and B
# (columns), Yes/No. p_o = 0.7, p_e = 0.5, kappa = 0.4.
COHEN_WIKIPEDIA = np.array([[20, 5], [10, 15]])

# SAS/STAT PROC FREQ documentation, AGREE option example (as also checked by statsmodels'
# test_inter_rater.py): simple kappa 0.4842.
COHEN_SAS = np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
