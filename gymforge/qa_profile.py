"""What an environment declares so that the QA checks have something real to test.

This is a declaration, not the checks: environments (``kit``, ``world``, ``envs``) and
verifiers import it, so it sits in the layer just above ``core``; ``gymforge.qa`` (the
checks, far above) re-exports these names for authors. The ``QA`` capability handle lives
here with the profile it reads, so that ``core`` names no QA type.

Every built-in environment sets ``qa = QAProfile(...)``. Nothing is skipped silently: a check
with nothing to test fails, unless a *user* environment lists it in ``not_applicable`` with a
reason (built-in environments never do).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from gymforge.core.capabilities import Capability

if TYPE_CHECKING:
    from gymforge.core.policy import Policy

CHECK_NAMES: tuple[str, ...] = (
    "replay_determinism",
    "reset_isolation",
    "scripted_baselines",
    "verifier_redteam",
    "error_paths",
    "truncation_accounting",
    "distribution_audit",
    "throughput",
    "trajectory_schema",
    "heldout_exclusion",
)

NOT_SUPPLIED = "not supplied by the framework"
"""How an adapter of another framework's environment (``gymforge.envs.*_adapter``) starts the
``not_applicable`` reason of a check that framework's contract gives it nothing to run on (no
oracle, no held-out split): the report says so instead of passing or faking the check."""


def not_supplied(framework: str, why: str) -> str:
    """The ``not_applicable`` reason for a check ``framework`` supplies nothing for."""
    return f"{NOT_SUPPLIED} ({framework}): {why}"


VerifierKind = Literal["math", "code", "match", "state"]


@dataclass(frozen=True)
class Baselines:
    """Thresholds for the scripted baselines on training tasks: success rates, and the most
    the no-op and the bad policy may *earn* on the episodes they fail (mean over those
    episodes). Earned is the sum of an episode's positive component totals: costs and
    penalties (negative) do not count. The default 0 says failing never pays; an environment
    whose reward pays a near miss by design (partial credit, a format bonus) declares the
    ``bad_reward_max`` it can justify. Doing nothing is not a near miss: keep
    ``noop_reward_max`` at 0 unless the task itself can be solved by doing nothing."""

    oracle_min: float = 0.95
    bad_max: float = 0.2
    noop_max: float = 0.05
    bad_policy: str = "random"
    noop_reward_max: float = 0.0
    bad_reward_max: float = 0.0
    redteam_reward_max: float | None = None
    """The most a red-team attack may earn, on average, on the episodes it fails
    (``verifier_redteam``); None: ``bad_reward_max``. An attack is a near miss built to be
    close (one field of a record swapped for its distractor): a reward that pays partial
    credit by design pays it more than the random agent, and declares what it can justify."""
    constant_max: float = 0.9
    """The most the constant-answer agent may solve: another task's oracle actions, carrying
    the answer most common over the sampled tasks, replayed on the others. The default fails
    an answer that (nearly) does not depend on the task and leaves chance alone: a yes/no
    answer space is right on about half the tasks, a few-valued one on a sampled share that
    can reach a half on a quick run's 8 tasks. An environment whose answers should be
    diverse may declare it lower, to a little above its most common gold's share."""
    constant_families: tuple[str, ...] = ()
    """Families whose answer is one by design (an "unanswerable" family's abstention) and
    whose prompts do not tell them from another family's, so that a policy cannot know the
    constant applies without doing the work: the per-family constant-answer baseline leaves
    them alone (the pooled one still counts them)."""


@dataclass(frozen=True)
class ThroughputBudget:
    """The environment's declared speed: reset p50 at most, steps per second at least."""

    reset_p50_ms: float = 50.0
    steps_per_s: float = 200.0
    concurrency: int = 8


@dataclass(frozen=True)
class RedTeamCase:
    """An environment-specific attack: a scripted policy that must never be judged a success.

    ``make_policy`` builds a fresh policy per episode (a scripted policy:
    it may consult the environment's oracle).
    """

    name: str
    make_policy: Callable[[], Policy]
    description: str = ""


@dataclass(frozen=True)
class QAProfile:
    """The declarations the ten checks read. Defaults are sensible for small tool worlds."""

    verifier_kinds: tuple[VerifierKind, ...] = ()
    redteam: tuple[RedTeamCase, ...] = ()
    baselines: Baselines = field(default_factory=Baselines)
    throughput: ThroughputBudget = field(default_factory=ThroughputBudget)
    family_weights: Mapping[str, float] | None = None  # declared mixture; None = uniform
    family_share_tolerance: float = 0.1
    max_duplicate_rate: float = 0.02
    success_band: tuple[float, float] = (0.02, 0.98)
    not_applicable: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.not_applicable) - set(CHECK_NAMES)
        if unknown:
            raise ValueError(f"not_applicable names unknown checks: {sorted(unknown)}")
        if any(not reason.strip() for reason in self.not_applicable.values()):
            raise ValueError("every not_applicable entry needs a reason")


@runtime_checkable
class HasQAProfile(Protocol):
    """``qa``: what ``gymforge qa`` should expect of this environment (verifier kinds,
    red-team cases, baselines, throughput)."""

    @property
    def qa(self) -> QAProfile: ...


QA: Capability[HasQAProfile] = Capability("qa", HasQAProfile, "QA profile")
"""The QA-profile capability (``gymforge.core.capabilities`` has the others)."""
