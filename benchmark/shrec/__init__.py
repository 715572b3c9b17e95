"""SHREC's benchmark half: from agreed spans to the eight task items, and models answering them.

Pairing spans across annotators and every score are statistics (``benchmark.stats.spans``,
``benchmark.stats.shrec``); this package holds what turns spans and transcripts into task items
(segments, excerpts, the task builders, subsets, the items' JSONL) and what asks a model a task item
(prompts, answer parsing, the scripted answerer). It reads no annotator model: the annotator app
hands it plain records of its spans.
"""
