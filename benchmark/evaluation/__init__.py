"""Evaluation: the automated judge and the rubrics it answers, as instruments."""
