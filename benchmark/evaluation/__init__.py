"""Automated evaluation of finished episodes: the judge (an LLM, or the offline scripted heuristics), the
rubrics it answers as instruments, and the majority of several respondents."""
