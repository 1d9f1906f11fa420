"""The store: the only writer of the corpus (git repository, placement, locking, commits)."""
