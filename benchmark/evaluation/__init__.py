"""Automated evaluation of finished episodes: the judge (an LLM, or the offline scripted heuristics)."""
