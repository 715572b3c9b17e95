"""Language agents: what a seat knows and is told (:mod:`.prompt`), how it takes its turn
(:mod:`.acting`), the LLM gateway every model call goes through (:mod:`.llm`, with
:mod:`.batches` for many calls at once), how a model answers an instrument (:mod:`.respondent`: the one
loop of the judge, the goal judges, the interviews and the blind test), and the offline scripted model
(:mod:`.scripted`)."""
