"""ProMediate's evaluation pass (spec §1.3 J1–J5, §1.4; PM-8, PM-9, PM-12, PM-13, PM-15).

- ``negotiation``: the episode as the judges read it (parties, topics, starting stances, turns);
- ``attitudes``: which attitude holds when and which pairs need a new score (pure);
- ``prompts``: what the judges are asked and how a reply is checked; ``PROMPT_VERSION``;
- ``model_judges``: the judges asked of a language model; ``scripted``: their offline stand-ins;
- ``passes``: one judge's pass over an episode, cached per judge and prompt version, stored whole.
"""
