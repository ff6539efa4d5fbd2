"""Trajectory records: the schema of a run's log, writing and reading it, sealing and checking
it. Re-running recorded episodes (replay) is the rollout layer's, which sits above this one."""
