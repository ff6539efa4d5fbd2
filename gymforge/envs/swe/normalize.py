"""The output normalisation of a workspace's commands lives in ``gymforge.sandbox.normalize``
(the ``swe`` and ``harbor:`` environments both use it); this path still names it."""

from gymforge.sandbox.normalize import normalize_output

__all__ = ["normalize_output"]
