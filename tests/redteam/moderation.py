"""A content policy's refusals, as the servers that apply one word them: shared by the
attacks whose agent writes what a moderated model will not read (its own server's,
``test_policy_server_refuses_agent_text.py``; a simulated user's,
``test_user_sim_refuses_agent_text.py``)."""

from __future__ import annotations

TRIGGER = "<<words the moderation refuses>>"
"""What the agent writes; any request holding it is refused."""
REFUSALS = {
    "openai": (
        "Your request was rejected as a result of our safety system.",
        "content_policy_violation",
    ),
    "azure": (
        "The response was filtered due to the prompt triggering Azure OpenAI's content "
        "management policy.",
        "content_filter",
    ),
    "gateway": ("Request blocked by guardrail: prohibited content", None),
}
"""Per kind of server, its refusal's message and error code (None: a gateway's guardrail
states none)."""
