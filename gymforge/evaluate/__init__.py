"""Evaluation: batch grading of answers, and (later) metrics and reports."""
