"""The suite's ``xdist_group`` marks reach the node ids ``--dist loadgroup`` schedules by
(``tests/conftest.py``'s hook: pytest 9.2 no longer reads the suffix pytest-xdist 3.8
assigns). If a later pytest or xdist moves the id again, every group would be split over the
workers silently (each built-in's QA report made on each, Ray clusters started at once on
both): this fails instead."""

from __future__ import annotations

import pytest


@pytest.mark.xdist_group("node_id_check")
def test_a_group_mark_reaches_the_node_id(request: pytest.FixtureRequest) -> None:
    config = request.config
    if not hasattr(config, "workerinput") or not getattr(config.option, "loadgroup", False):
        pytest.skip("only an xdist worker of a loadgroup run (the README's test command)")
    assert request.node.nodeid.endswith("@node_id_check"), request.node.nodeid
