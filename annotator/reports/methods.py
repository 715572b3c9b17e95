"""How a study's agreement report was computed, in words, for its ``methods`` section."""

from __future__ import annotations

from benchmark.stats.spans import DEFAULT_MIN_IOU


def study_methods(resamples: int, seed: int) -> dict[str, str]:
    return {
        "selection": (
            "Each assignment's latest submitted annotation version on a regular item. Drafts and earlier "
            "versions are left out, and so are gold items and attention checks: they check annotators, and "
            "their answers are steered by a known key or an instruction."
        ),
        "units": (
            "A rated unit is one item (an episode of the study, numbered as in the exports); for questions "
            "asked per seat each (item, seat) is its own unit, named '<item>:<seat>', since each character "
            "is a separate target of rating. Units with fewer than two ratings are excluded from agreement "
            "statistics and counted; means and correlations use every rated unit. Units of one scenario are "
            "not independent: the bootstraps of accuracy and Fleiss' kappa resample scenarios, while the "
            "intervals of the ICC, the means per condition and the alignment with the judge treat units as "
            "independent and say so in their notes."
        ),
        "types": (
            "Categorical and pairwise questions are categorical over their choices (q = number of choices for "
            "Randolph's kappa); Likert and slider questions are numeric, binned over their full scale for the "
            "binned kappas; span questions get span agreement; free-text questions get no statistic."
        ),
        "accuracy": (
            f"For questions whose truth is the episode's barrier: share of answers equal to the barrier of the "
            f"item's episode, overall and per true barrier, with percentile 95% CIs from a cluster bootstrap "
            f"that resamples scenarios with replacement (B = {resamples}, seed {seed}); chance = 1 / number "
            "of choices; the confusion matrix counts answers (columns) per true barrier (rows)."
        ),
        "alignment": (
            "For questions that measure an evaluation dimension: the judge is the evaluator (and prompt "
            "version) with the most scores of that dimension for the study's episodes, excluding imported "
            "'human mean' scores. Pearson r (Fisher-z 95% CI) and Spearman rho between the mean human rating "
            "per unit and the judge's score for it; means per condition (the episode's barrier) with 95% t "
            "intervals over units, for humans and the judge side by side."
        ),
        "respondents": (
            "Whose answers the annotators' are compared with: respondents of the kinds in compared_with "
            "(automated judges unless asked otherwise; interviewed agents, participants or other studies' "
            "annotators on request). An answer counts when its response is submitted (not a draft, not a "
            "version superseded by an edit), it is about one of the study's episodes, and it answers the same "
            "question or a question of any instrument that measures the same dimension; this study's own "
            "annotations never count. The judge is the respondent among them with the most numeric answers to "
            "the question."
        ),
        "spans": (
            f"Spans of the same item from different annotators are paired by intersection over union "
            f"(IoU >= {DEFAULT_MIN_IOU}) of their positions in turns: turns s..e are [s, e + 1), and character "
            "offsets cut each end by the share of the turn's text they leave out. Every annotator who "
            "submitted the item counts, whether or not they marked a span."
        ),
        "annotators": (
            "Per annotator and question, on regular items only: agreement with the other annotators (the share of "
            "equal answer pairs on the same unit; for nominal questions also Cohen's kappa with each other annotator, "
            "averaged (Light 1971); for numeric ones the mean absolute difference), agreement with gold (the "
            "adjudicated answers: share equal, Cohen's kappa or mean absolute difference), and, for nominal questions, "
            "MACE competence (Hovy, Berg-Kirkpatrick, Vaswani & Hovy 2013, 'Learning Whom to Trust with MACE', "
            "NAACL-HLT: the probability that the annotator gives the true label rather than guessing, learnt by "
            "variational-Bayes EM from every annotator's answers, without gold, with the authors' tool's defaults: "
            "10 random restarts of 50 iterations, Beta(0.5, 0.5) and Dirichlet(10) priors)."
        ),
        "interpretation": (
            "Kappa and alpha labelled after Landis & Koch (1977), ICC after Cicchetti (1994). Numbers are "
            "unrounded in the JSON and CSV downloads and rounded to three decimals on the page."
        ),
    }


