"""A tiny world environment for the world-layer tests: add notes, each with a tag."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from gymforge.core import EnvSpec, Reply, Task, ToolCall
from gymforge.core.errors import ToolError
from gymforge.tasks import IntKnob, ParamSpace, Split, TaskSource
from gymforge.tools import tool
from gymforge.verify import Verdict
from gymforge.world import (
    Expect,
    TemplateCache,
    WorldDB,
    WorldFamily,
    WorldFaults,
    WorldToolEnv,
    effect_findings,
    table,
    verdict_of,
    world_read,
    world_write,
)
from gymforge.world.env import WorldTruth
from gymforge.world.schema import Schema
from gymforge.world.writes import NO_WORLD_FAULTS

SCHEMA = Schema(
    (
        table("tags", "id", "label"),
        table("notes", "id", "tag_id", "text", "created_at"),
        table("audit_log", "id", "at", "actor", "action", "entity_id", "detail"),
    )
)


class NoteTruth(WorldTruth):
    texts: list[str]


class NoteFamily(WorldFamily[NoteTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, NoteTruth]:
        tags: list[dict[str, Any]] = [
            {"id": f"TG-{i}", "label": f"label{r.randrange(100)}"} for i in range(3)
        ]
        texts = [f"note {r.randrange(1000)}" for _ in range(params["n"])]
        truth = NoteTruth(world={"tags": tags}, now="2024-05-01T09:00:00Z", texts=texts)
        return "Add the notes: " + "; ".join(texts), truth


FAMILY = NoteFamily(
    "notes.add", 1, {1: ParamSpace({"n": IntKnob(1, 2)}), 2: ParamSpace({"n": IntKnob(3, 4)})}
)


class NotesEnv(WorldToolEnv[NoteTruth]):
    spec = EnvSpec("notes", "1.0.0")
    schema = SCHEMA
    templates = TemplateCache(8)
    tasks = TaskSource.of([FAMILY], Split(regions={"notes.add": {"many": lambda p: p["n"] >= 4}}))
    faults: ClassVar[WorldFaults] = NO_WORLD_FAULTS

    def world_faults(self, task: Task) -> WorldFaults:
        return self.faults

    @tool
    @world_read
    def list_notes(self) -> dict[str, Any]:
        """List the notes."""
        return {"items": self.db.all("SELECT id, text FROM notes ORDER BY created_at")}

    @tool(writes=True)
    @world_write
    def add_note(
        self, text: str, tag_id: str = "TG-0", idempotency_key: str = ""
    ) -> dict[str, Any]:
        """Add a note.

        Args:
            text: The note.
            tag_id: Its tag.
            idempotency_key: Makes retries safe.
        """
        note_id = self.db.new_id("NT")
        at = self.audit("add_note", note_id)
        self.db.insert("notes", {"id": note_id, "tag_id": tag_id, "text": text, "created_at": at})
        if self.db.get("tags", tag_id) is None:  # checked after writing: exercises rollback
            raise ToolError("not_found", f"no tag {tag_id}")
        return {"note_id": note_id}

    def verify(self, task: Task, world: WorldDB, reply: str) -> Verdict:
        expect = Expect(
            added={"notes": [{"text": t} for t in self.truth_of(task).texts]},
            touched=frozenset({"audit_log"}),
        )
        return verdict_of(effect_findings(world.diff(), expect), verifier="notes@1", facts={})

    def oracle_plan(self, task: Task) -> list[Any]:
        calls = [
            ToolCall(name="add_note", arguments={"text": t, "idempotency_key": f"k{i}"})
            for i, t in enumerate(self.truth_of(task).texts)
        ]
        return [*calls, Reply(text="done")]
