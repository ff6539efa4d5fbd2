"""gymforge.core: the contract every other part imports. It imports nothing else of gymforge."""

from gymforge.core.capabilities import Capability, require, supported
from gymforge.core.env import Environment, EnvSpec, StepResult, SupportsOracle, SyncEnvironment
from gymforge.core.episode import Budget, EpisodeCounters, MalformedPolicy
from gymforge.core.errors import (
    ConfigError,
    EpisodeStateError,
    GymforgeError,
    InfraError,
    IntegrityError,
    PolicyError,
    ToolError,
    UnknownTaskError,
    UserError,
    VerifierError,
)
from gymforge.core.policy import CaptureLevel, EpisodeContext, Policy, PolicyTurn
from gymforge.core.seeding import canonical_json, derive_seed, fingerprint, rng, stable_hash
from gymforge.core.tokens import ApproxTokenCounter, TokenCounter
from gymforge.core.types import (
    JSON,
    Action,
    Invalid,
    Message,
    Observation,
    Reply,
    State,
    Task,
    ToolCall,
)
from gymforge.core.verdict import Verdict

__all__ = [
    "JSON",
    "Action",
    "ApproxTokenCounter",
    "Budget",
    "Capability",
    "CaptureLevel",
    "ConfigError",
    "EnvSpec",
    "Environment",
    "EpisodeContext",
    "EpisodeCounters",
    "EpisodeStateError",
    "GymforgeError",
    "InfraError",
    "IntegrityError",
    "Invalid",
    "MalformedPolicy",
    "Message",
    "Observation",
    "Policy",
    "PolicyError",
    "PolicyTurn",
    "Reply",
    "State",
    "StepResult",
    "SupportsOracle",
    "SyncEnvironment",
    "Task",
    "TokenCounter",
    "ToolCall",
    "ToolError",
    "UnknownTaskError",
    "UserError",
    "Verdict",
    "VerifierError",
    "canonical_json",
    "derive_seed",
    "fingerprint",
    "require",
    "rng",
    "stable_hash",
    "supported",
]
