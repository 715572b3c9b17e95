"""Automated evaluation of finished episodes: the judge (an LLM, or the offline scripted heuristics), the
rubrics it answers as instruments, the majority of several respondents, interviews of the agents
themselves about the goals and the probes (:mod:`.interviews`, with the blind test before any
interaction), and external judges of every goal (:mod:`.goal_judge`)."""
