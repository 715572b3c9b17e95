"""Work on scenarios beyond their rows in ``benchmark.models``: the neutral public context (:mod:`.neutralise`)
templates filled with casts (:mod:`.templates`), and who speaks next under the scenario's turn-taking policy
(:mod:`.turn_taking`, shared by agent runs, the scripted agent and the chat)."""
