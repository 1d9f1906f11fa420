"""Evaluation: the benchmarks `memhtml eval …` runs (LoCoMo retrieval, the discrimination gate, the
supersession benchmark), beside the doors and above the operations, because they measure the product
through its real write path and search without being part of its memory behaviour. Their fixtures and
scoring are pure; the runs write into fresh temporary stores and never open the user's."""
