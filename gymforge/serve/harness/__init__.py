"""Outside agent harnesses as policies (``harness:``, ``harness-cmd:``; the ``[harness]``
extra): ``policy`` runs one per episode, ``bridge`` is its MCP tool channel, and
``gymforge.serve.proxy`` records its model requests."""
