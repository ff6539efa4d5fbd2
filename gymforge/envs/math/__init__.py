"""The math environment and its task families."""
