"""Server metrics: counters and latency percentiles, as JSON or Prometheus text.

Latencies are the server's handling time of each message type (receive to reply sent, not
network time), kept in a ring of the last ``WINDOW`` samples per type. Percentiles are over
that window; counts are since start.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

WINDOW = 8192
QUANTILES = (0.5, 0.9, 0.99)


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list (0.0 for an empty one)."""
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, int(q * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


@dataclass
class Metrics:
    started: float = field(default_factory=time.time)
    max_sessions: int = 0
    sessions_open: int = 0
    sessions_total: int = 0
    sessions_reaped: int = 0
    sessions_refused: int = 0
    auth_failures: int = 0
    messages: int = 0
    faults_injected: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    ops: Counter[str] = field(default_factory=Counter)
    _latency: dict[str, deque[float]] = field(default_factory=dict)

    def observe(self, op: str, ms: float) -> None:
        self.ops[op] += 1
        ring = self._latency.get(op)
        if ring is None:
            ring = self._latency[op] = deque(maxlen=WINDOW)
        ring.append(ms)

    def latency(self) -> dict[str, dict[str, float]]:
        out = {}
        for op, ring in sorted(self._latency.items()):
            values = sorted(ring)
            out[op] = {
                "count": self.ops[op],
                "window": len(values),
                **{f"p{round(q * 100)}_ms": round(percentile(values, q), 3) for q in QUANTILES},
                "max_ms": round(values[-1], 3) if values else 0.0,
            }
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "uptime_s": round(time.time() - self.started, 3),
            "sessions": {
                "open": self.sessions_open,
                "total": self.sessions_total,
                "reaped": self.sessions_reaped,
                "refused_capacity": self.sessions_refused,
                "max": self.max_sessions,
            },
            "auth_failures": self.auth_failures,
            "messages": self.messages,
            "resets": self.ops["reset"],
            "steps": self.ops["step"],
            "faults_injected": self.faults_injected,
            "errors": {"total": sum(self.errors.values()), **dict(sorted(self.errors.items()))},
            "latency": self.latency(),
        }

    def prometheus(self) -> str:
        """The Prometheus text exposition format (0.0.4)."""
        lines: list[str] = []

        def metric(name: str, kind: str, help_: str, samples: list[tuple[str, float]]) -> None:
            lines.append(f"# HELP gymforge_{name} {help_}")
            lines.append(f"# TYPE gymforge_{name} {kind}")
            lines.extend(f"gymforge_{name}{labels} {value:g}" for labels, value in samples)

        metric(
            "uptime_seconds", "gauge", "Seconds since start.", [("", time.time() - self.started)]
        )
        metric("sessions_open", "gauge", "Open sessions.", [("", self.sessions_open)])
        metric("sessions_max", "gauge", "Session capacity.", [("", self.max_sessions)])
        metric("sessions_total", "counter", "Sessions accepted.", [("", self.sessions_total)])
        metric("sessions_reaped_total", "counter", "Idle sessions reaped.",
               [("", self.sessions_reaped)])  # fmt: skip
        metric("sessions_refused_total", "counter", "Sessions refused at capacity.",
               [("", self.sessions_refused)])  # fmt: skip
        metric("auth_failures_total", "counter", "Refused credentials.",
               [("", self.auth_failures)])  # fmt: skip
        metric("messages_total", "counter", "Client messages received.", [("", self.messages)])
        metric("faults_injected_total", "counter", "Fault injections applied.",
               [("", self.faults_injected)])  # fmt: skip
        metric("errors_total", "counter", "Error replies by code.",
               [(f'{{code="{c}"}}', n) for c, n in sorted(self.errors.items())])  # fmt: skip
        summary: list[tuple[str, float]] = []
        for op, ring in sorted(self._latency.items()):
            values = sorted(ring)
            summary += [
                (f'{{op="{op}",quantile="{q}"}}', percentile(values, q) / 1e3) for q in QUANTILES
            ]
            summary.append((f'_count{{op="{op}"}}', self.ops[op]))
        lines.append("# HELP gymforge_request_seconds Server handling time per message type.")
        lines.append("# TYPE gymforge_request_seconds summary")
        lines.extend(f"gymforge_request_seconds{labels} {value:g}" for labels, value in summary)
        return "\n".join(lines) + "\n"
