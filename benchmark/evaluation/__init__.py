"""Automated evaluation of finished episodes: the judge (an LLM, or the offline scripted heuristics),
and interviews of the agents themselves about the goals and the probes (:mod:`.interviews`)."""
