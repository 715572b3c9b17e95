"""Benchmark results: the plain table built from the database (:mod:`.build`), its filters
(:mod:`.forms`), tables and text reports (:mod:`.tables`), figures (:mod:`.figures`) and the
results page and downloads (:mod:`.views`). The arithmetic is in ``benchmark.stats.results``."""
