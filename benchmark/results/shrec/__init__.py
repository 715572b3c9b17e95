"""SHREC's results: Table 1 and Table 2 over models and the human baseline, figures, the dataset panel."""
