"""``gymforge proxy``: an OpenAI-compatible proxy between a harness and an inference server
that records every episode's exact tokens (``server``), continuing extending requests
token-in (``continuation``); ``transcript`` is what it records, ``sse`` the streaming format.
"""
