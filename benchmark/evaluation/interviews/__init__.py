"""Interviews: after an episode, each agent is asked about the goals and about the others (AgentSense).

AgentSense asks, once a conversation is over, whether each goal was achieved: of the character
whose goal it is (the self perspective), of the other characters (the other perspective) and of
external judges; and it asks multiple-choice questions about what each character kept private.
Every agent seat of a finished episode can be interviewed the same way here:

- **Goals**: for every goal of every role, "was this goal achieved?" (yes / no), from the preset
  instrument *AgentSense goals* (one question, asked once per goal). Answers about the seat's own
  role are its self-assessment; those about the other roles are its view of them.
- **Probes**: the scenario's probes this seat may be asked (``Probe.asked_of``: the other roles,
  the role itself, or anyone), as multiple-choice questions with the probe's options, from an
  instrument built per scenario (``instruments.probes_instrument``: one question per probe, frozen once
  built, and a new version only when the probes change).

The agent is told what it knew in the conversation (its own goals, reason, private knowledge and
profile; the others as the relationship shows them; the transcript) and the questions. A probe
never reveals its answer; the others' goals are shown, as in AgentSense, only to ask about them.

Answers are ``Response`` and ``Answer`` rows of a ``Respondent`` of kind ``agent`` (the seat's model
and ``asking.PROMPT_VERSION``, or the scripted model and ``scripted.VERSION``), with
``Response.seat_position`` the seat interviewed. A model answers through the one loop every model
respondent uses (``benchmark.agents.respondent``: one call per seat and instrument, at temperature 0,
its answers checked question by question, repaired once and asked afresh as the judge's are); the
offline scripted model answers with transparent heuristics, its reasoning opening with
``scripted.DISCLAIMER``. A stored interview is kept unless ``force``; a new one
replaces it whole.

The package: ``instruments`` (the goals preset and the per-scenario probes instrument), ``asking``
(what each seat is asked and how a model is asked it), ``scripted`` (the offline answers),
``running`` (interviewing episodes and storing the answers) and ``blind`` (the blind test: the
probes answered before any interaction, without the transcript). The third perspective, external
judges of every goal, is ``benchmark.evaluation.goal_judge``.
"""
