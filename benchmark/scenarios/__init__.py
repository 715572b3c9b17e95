"""Work on scenarios beyond their rows in ``benchmark.models``: the neutral public context (:mod:`.neutralise`)
and templates filled with casts (:mod:`.templates`)."""
