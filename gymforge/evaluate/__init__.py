"""Evaluation: batch grading, metrics and estimators (pass@k, pass^k, Wilson, held-out
gap), behavioural analysis, and self-contained HTML reports."""
