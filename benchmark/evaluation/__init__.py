"""Automated evaluation of finished episodes: the judge (an LLM, or the offline scripted heuristics), the
questions it answers (its rubrics are instruments: ``benchmark.instruments.rubrics``), the majority of
several respondents, interviews of the agents themselves about the goals and the probes
(:mod:`.interviews`, with the blind test before any interaction), and external judges of every goal
(:mod:`.goal_judge`). Every model among them answers through ``benchmark.agents.respondent``."""
