"""Automated evaluation of finished episodes: the judge (an LLM, or the offline scripted heuristics), the
rubrics it answers as instruments, the majority of several respondents, and interviews of the agents
themselves about the goals and the probes (:mod:`.interviews`)."""
