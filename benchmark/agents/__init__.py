"""Language agents: what a seat knows and is told (:mod:`.prompt`), how it takes its turn
(:mod:`.acting`), the LLM gateway every model call goes through (:mod:`.llm`, with
:mod:`.batches` for many calls at once), and the offline scripted model (:mod:`.scripted`)."""
