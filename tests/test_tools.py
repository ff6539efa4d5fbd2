"""Tools: schemas from typed signatures, argument validation, errors, seeded faults."""

from __future__ import annotations

import datetime
import enum
import json
from typing import Any

import pytest
from pydantic import BaseModel

from gymforge.core import ToolCall, ToolError, fingerprint
from gymforge.envs.ledger import LedgerEnv
from gymforge.tools import FaultPlan, ToolResult, Toolset, parse_docstring, tool, tools_of


class Item(BaseModel):
    name: str
    qty: int


class Shop:
    """A small tool owner with read tools of several return shapes and one write tool."""

    def __init__(self) -> None:
        self.items = [Item(name="apple", qty=3), Item(name="pear", qty=1)]

    @tool
    def find_items(self, name: str, limit: int = 5) -> list[Item]:
        """Search the catalogue by name.

        Longer explanation that is not part of the description.

        Args:
            name: Part of the item name, case-insensitive.
            limit: Maximum number of items
                to return.

        Returns:
            The matching items.
        """
        return [i for i in self.items if name.lower() in i.name.lower()][:limit]

    @tool
    def stock(self, name: str) -> dict[str, int]:
        """Stock level by item name.

        Args:
            name: Exact item name.
        """
        return {i.name: i.qty for i in self.items if i.name == name}

    @tool
    def label(self, name: str) -> str:
        """A printable label.

        Args:
            name: Exact item name.
        """
        return f"<{name}>"

    @tool(writes=True)
    def add_item(self, name: str, qty: int) -> Item:
        """Add an item to the catalogue.

        Args:
            name: The item name.
            qty (int): How many.
        """
        item = Item(name=name, qty=qty)
        self.items.append(item)
        return item

    @tool
    def refuse(self) -> str:
        """Always refuses."""
        raise ToolError("not_found", "nothing here", retryable=False)

    @tool
    def flaky(self) -> str:
        """Fails with a retryable conflict."""
        raise ToolError("conflict", "busy, try again", retryable=True)

    @tool
    def crash(self) -> str:
        """Has a bug."""
        raise RuntimeError("boom")

    @tool(name="renamed")
    def weird_name(self, flag: bool = False) -> None:
        """Named explicitly."""


def shop_tools(plan: FaultPlan | None = None, task_id: str = "t/v1/d1/s1", seed: int = 0):
    shop = Shop()
    ts = Toolset(shop)
    if plan is not None:
        ts.reset(task_id, seed, plan)
    return shop, ts


def call(ts: Toolset, tool_name: str, /, **arguments: Any) -> ToolResult:
    result, latency = ts.call(ToolCall(name=tool_name, arguments=arguments))
    assert latency >= 0.0
    return result


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"


# ---- schema ------------------------------------------------------------------------------
def test_schema_openai_shape() -> None:
    tools = {t.name: t for t in tools_of(Shop())}
    schema = tools["find_items"].schema
    assert set(schema) == {"type", "function"}
    assert schema["type"] == "function"
    fn = schema["function"]
    assert set(fn) == {"name", "description", "parameters"}
    assert fn["name"] == "find_items"
    assert fn["description"] == "Search the catalogue by name."
    params = fn["parameters"]
    assert params["type"] == "object"
    assert params["additionalProperties"] is False
    assert params["required"] == ["name"]
    assert params["properties"]["name"]["type"] == "string"
    assert params["properties"]["name"]["description"] == (
        "Part of the item name, case-insensitive."
    )
    assert params["properties"]["limit"]["type"] == "integer"
    assert params["properties"]["limit"]["default"] == 5
    assert params["properties"]["limit"]["description"] == "Maximum number of items to return."
    assert "title" not in json.dumps(schema)
    json.dumps(schema)  # JSON-serialisable


def test_schema_is_valid_json_schema_and_validates_arguments() -> None:
    from jsonschema import Draft202012Validator

    for t in tools_of(Shop()):
        params = t.schema["function"]["parameters"]
        Draft202012Validator.check_schema(params)
    params = {t.name: t for t in tools_of(Shop())}["add_item"].schema["function"]["parameters"]
    v = Draft202012Validator(params)
    assert v.is_valid({"name": "kiwi", "qty": 2})
    assert not v.is_valid({"name": "kiwi"})
    assert not v.is_valid({"name": "kiwi", "qty": 2, "extra": 1})
    assert not v.is_valid({"name": "kiwi", "qty": "2"})


def test_schema_typed_docstring_args_and_names() -> None:
    tools = {t.name: t for t in tools_of(Shop())}
    assert list(tools) == [
        "find_items",
        "stock",
        "label",
        "add_item",
        "refuse",
        "flaky",
        "crash",
        "renamed",
    ]
    add = tools["add_item"].schema["function"]["parameters"]
    assert add["required"] == ["name", "qty"]
    assert add["properties"]["qty"]["description"] == "How many."
    assert tools["add_item"].writes and not tools["find_items"].writes
    renamed = tools["renamed"].schema["function"]
    assert renamed["description"] == "Named explicitly."
    assert renamed["parameters"]["properties"]["flag"]["type"] == "boolean"
    assert "required" not in renamed["parameters"] or renamed["parameters"]["required"] == []
    no_args = tools["refuse"].schema["function"]["parameters"]
    assert no_args["properties"] == {} and no_args["additionalProperties"] is False


def test_parse_docstring() -> None:
    desc, args = parse_docstring(
        """Do a thing.

        Args:
            a: First.
            b (int): Second,
                continued.
        Returns:
            Nothing.
        """
    )
    assert desc == "Do a thing."
    assert args == {"a": "First.", "b": "Second, continued."}
    assert parse_docstring(None) == ("", {})


def test_tool_without_docstring_uses_name() -> None:
    @tool
    def bare(x: int) -> int:
        return x

    t = bare.__gymforge_tool__
    assert t.schema["function"]["description"] == "bare"
    assert t.schema["function"]["parameters"]["required"] == ["x"]


def test_tool_requires_type_hints_and_no_varargs() -> None:
    with pytest.raises(TypeError, match="type hint"):

        @tool
        def untyped(x) -> int:  # type: ignore[no-untyped-def]
            return 1

    with pytest.raises(TypeError, match=r"\*args"):

        @tool
        def varargs(*xs: int) -> int:
            return 1


def test_module_level_tools_in_toolset() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: First.
            b: Second.
        """
        return a + b

    ts = Toolset(None, [add.__gymforge_tool__])
    r = call(ts, "add", a=2, b=3)
    assert r.ok and r.content == 5
    assert r.render() == '{"ok":true,"result":5}'


def test_enum_tuple_and_date_parameters_take_their_json_values() -> None:
    """The schema says an enum's value, an array for a tuple, an ISO date string: a call
    that sends exactly that runs, and the tool gets the typed value; wrong values are still
    refused with the usual message."""
    got: list[Any] = []

    @tool
    def plan(level: Level, span: tuple[int, str], day: datetime.date) -> str:
        """Plan something.

        Args:
            level: How much.
            span: Count and unit.
            day: When.
        """
        got.append((level, span, day))
        return "planned"

    ts = Toolset(None, [plan.__gymforge_tool__])
    r = call(ts, "plan", level="high", span=[2, "days"], day="2026-12-01")
    assert r.ok, r
    assert got == [(Level.HIGH, (2, "days"), datetime.date(2026, 12, 1))]
    bad = call(ts, "plan", level="medium", span=[2, "days"], day="2026-12-01")
    assert not bad.ok and bad.error is not None and bad.error.kind == "invalid_arguments"
    assert "level" in bad.error.message
    wrong = call(ts, "plan", level="low", span="2 days", day=20261201)
    assert wrong.error is not None and "span" in wrong.error.message


# ---- calls and errors --------------------------------------------------------------------
def test_successful_call_dumps_json() -> None:
    _, ts = shop_tools()
    r = call(ts, "find_items", name="AP")
    assert r.ok and r.error is None and r.fault is None and not r.stale
    assert r.content == [{"name": "apple", "qty": 3}]
    assert json.loads(r.render()) == {"ok": True, "result": [{"name": "apple", "qty": 3}]}
    assert call(ts, "find_items", name="p", limit=1).content == [{"name": "apple", "qty": 3}]
    assert call(ts, "renamed").content is None


@pytest.mark.parametrize(
    "name, arguments, fragment",
    [
        ("find_items", {"name": 5}, "name"),  # wrong type (strict: no int->str)
        ("find_items", {"name": "a", "limit": "3"}, "limit"),  # wrong type (no str->int)
        ("find_items", {"name": "a", "limit": 2.5}, "limit"),
        ("find_items", {}, "name"),  # missing
        ("add_item", {"name": "x"}, "qty"),  # missing
        ("find_items", {"name": "a", "zzz": 1}, "zzz"),  # extra
        ("find_items", {"name": "a", "__class__": 1}, "__class__"),
        ("renamed", {"flag": "true"}, "flag"),
        ("add_item", {"name": None, "qty": 1}, "name"),
    ],
)
def test_invalid_arguments_become_error_results(
    name: str, arguments: dict[str, Any], fragment: str
) -> None:
    shop, ts = shop_tools()
    before = list(shop.items)
    r = call(ts, name, **arguments)
    assert r.ok is False
    assert r.error is not None and r.error.kind == "invalid_arguments"
    assert fragment in r.error.message
    assert r.error.retryable is False
    assert shop.items == before  # not applied
    assert json.loads(r.render())["ok"] is False


def test_invalid_arguments_do_not_consume_a_call_index() -> None:
    plan = FaultPlan(forced=(("find_items", 0, "timeout"),))
    _, ts = shop_tools(plan)
    assert call(ts, "find_items", name=1).error.kind == "invalid_arguments"
    r = call(ts, "find_items", name="a")
    assert r.fault == "timeout"  # the first *valid* call has index 0


@pytest.mark.parametrize("name", ["nope", "", "x" * 300, "find_items "])
def test_unknown_tool(name: str) -> None:
    _, ts = shop_tools()
    r = call(ts, name)
    assert r.ok is False
    assert r.error is not None and r.error.kind == "unknown_tool"
    assert "find_items" in r.error.message  # lists what is available
    assert len(r.tool) <= 200


def test_tool_error_is_structured() -> None:
    _, ts = shop_tools()
    r = call(ts, "refuse")
    assert not r.ok and r.error is not None
    assert (r.error.kind, r.error.message, r.error.retryable) == (
        "not_found",
        "nothing here",
        False,
    )
    r = call(ts, "flaky")
    assert not r.ok and r.error is not None
    assert (r.error.kind, r.error.retryable) == ("conflict", True)
    assert json.loads(r.render()) == {
        "ok": False,
        "error": {"kind": "conflict", "message": "busy, try again", "retryable": True},
    }


def test_crashing_tool_is_internal_error() -> None:
    _, ts = shop_tools()
    r = call(ts, "crash")
    assert not r.ok and r.error is not None
    assert r.error.kind == "internal"
    assert "RuntimeError" in r.error.message
    assert ts.last_result is r


def test_unserialisable_return_is_internal_error() -> None:
    @tool
    def odd() -> Any:
        """Returns something that is not JSON."""
        return object()

    r = call(Toolset(None, [odd.__gymforge_tool__]), "odd")
    assert not r.ok and r.error is not None and r.error.kind == "internal"


def test_tool_error_with_unknown_kind_does_not_escape() -> None:
    @tool
    def bad_kind() -> str:
        """Raises a ToolError with a kind the taxonomy does not know."""
        raise ToolError("exploded", "nope")  # type: ignore[arg-type]

    r = call(Toolset(None, [bad_kind.__gymforge_tool__]), "bad_kind")
    assert not r.ok and r.error is not None and r.error.kind == "internal"


# ---- FaultPlan ---------------------------------------------------------------------------
def test_fault_decisions_are_pure() -> None:
    a = FaultPlan(rates={"timeout": 0.25, "empty": 0.25})
    b = FaultPlan(rates={"timeout": 0.25, "empty": 0.25})
    keys = [
        (t, s, tool_, i)
        for t in ("x/v1/d1/s1", "y")
        for s in (0, 7)
        for tool_ in "ab"
        for i in range(50)
    ]
    first = [a.decide(*k) for k in keys]
    assert first == [a.decide(*k) for k in keys]
    assert first == [b.decide(*k) for k in keys]
    assert set(first) == {None, "timeout", "empty"}

    # each of task_id, seed and tool changes the sequence of decisions
    def seq(task_id: str, seed: int, tool_name: str) -> list[str | None]:
        return [a.decide(task_id, seed, tool_name, i) for i in range(64)]

    base = seq("x", 0, "a")
    assert base != seq("x", 1, "a")
    assert base != seq("y", 0, "a")
    assert base != seq("x", 0, "b")


def test_faults_in_one_tool_do_not_shift_another() -> None:
    plan = FaultPlan(rates={"timeout": 0.5})

    def faults_of_stock(interleave: bool) -> list[str | None]:
        _, ts = shop_tools(plan)
        seen = []
        for _ in range(30):
            if interleave:
                call(ts, "find_items", name="a")
                call(ts, "label", name="a")
            seen.append(call(ts, "stock", name="apple").fault)
        return seen

    alone, mixed = faults_of_stock(False), faults_of_stock(True)
    assert alone == mixed
    assert "timeout" in alone and None in alone


def test_forced_faults_fire_exactly() -> None:
    plan = FaultPlan(forced=(("stock", 2, "timeout"), ("label", 0, "permission_denied")))
    for i in range(10):
        assert plan.decide("t", 0, "stock", i) == ("timeout" if i == 2 else None)
        assert plan.decide("t", 0, "label", i) == ("permission_denied" if i == 0 else None)
        assert plan.decide("t", 0, "other", i) is None
    # forced faults ignore the `tools` restriction
    limited = FaultPlan(tools=frozenset({"x"}), forced=(("stock", 0, "empty"),))
    assert limited.decide("t", 0, "stock", 0) == "empty"


def test_forced_faults_through_toolset() -> None:
    plan = FaultPlan(forced=(("stock", 1, "timeout"), ("label", 0, "permission_denied")))
    _, ts = shop_tools(plan)
    assert call(ts, "stock", name="apple").fault is None
    r = call(ts, "stock", name="apple")
    assert (r.ok, r.fault, r.error.kind, r.error.retryable) == (False, "timeout", "timeout", True)
    assert call(ts, "stock", name="apple").fault is None
    r = call(ts, "label", name="apple")
    assert (r.ok, r.fault, r.error.kind, r.error.retryable) == (
        False,
        "permission_denied",
        "permission_denied",
        False,
    )


def test_reset_restarts_call_indices() -> None:
    plan = FaultPlan(forced=(("stock", 0, "timeout"),))
    _, ts = shop_tools(plan)
    assert call(ts, "stock", name="apple").fault == "timeout"
    assert call(ts, "stock", name="apple").fault is None
    ts.reset("t/v1/d1/s1", 0, plan)
    assert call(ts, "stock", name="apple").fault == "timeout"


@pytest.mark.parametrize("kind", ["timeout", "empty", "permission_denied", "stale"])
def test_rates_roughly_respected(kind: str) -> None:
    plan = FaultPlan(rates={kind: 0.3})
    hits = sum(plan.decide("ledger/v1/d1/s9", 4, "tool", i) == kind for i in range(2000))
    assert 0.2 * 2000 <= hits <= 0.4 * 2000


def test_mixed_rates_roughly_respected() -> None:
    plan = FaultPlan(rates={"timeout": 0.1, "empty": 0.2, "stale": 0.05})
    draws = [plan.decide("t", 1, "tool", i) for i in range(4000)]
    assert 0.07 <= draws.count("timeout") / 4000 <= 0.13
    assert 0.16 <= draws.count("empty") / 4000 <= 0.24
    assert 0.03 <= draws.count("stale") / 4000 <= 0.07
    assert draws.count("permission_denied") == 0
    assert all(FaultPlan(rates={"timeout": 1.0}).decide("t", 1, "x", i) for i in range(100))


def test_zero_rates_and_tool_restriction() -> None:
    assert all(FaultPlan().decide("t", 0, "x", i) is None for i in range(200))
    assert all(FaultPlan(rates={"timeout": 0.0}).decide("t", 0, "x", i) is None for i in range(200))
    limited = FaultPlan(rates={"timeout": 1.0}, tools=frozenset({"a"}))
    assert all(limited.decide("t", 0, "b", i) is None for i in range(200))
    assert all(limited.decide("t", 0, "a", i) == "timeout" for i in range(200))


@pytest.mark.parametrize(
    "rates",
    [
        {"timeout": -0.1},
        {"timeout": 1.5},
        {"timeout": 0.6, "empty": 0.5},
        {"explode": 0.1},
        {"timeout": 0.1, "boom": 0.0},
    ],
)
def test_invalid_rates_rejected(rates: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        FaultPlan(rates=rates)  # type: ignore[arg-type]


def test_nan_rate_rejected() -> None:
    with pytest.raises(ValueError):
        FaultPlan(rates={"timeout": float("nan")})


def test_empty_fault_returns_empty_value_of_return_type() -> None:
    plan = FaultPlan(
        forced=(("find_items", 0, "empty"), ("stock", 0, "empty"), ("label", 0, "empty"))
    )
    _, ts = shop_tools(plan)
    for name, empty in (("find_items", []), ("stock", {}), ("label", "")):
        r = call(ts, name, name="apple")
        assert r.ok is True and r.fault == "empty" and r.content == empty
        assert json.loads(r.render()) == {"ok": True, "result": empty}
    # the next call is real again
    assert call(ts, "find_items", name="apple").content == [{"name": "apple", "qty": 3}]


def test_stale_serves_earlier_result_for_read_tools() -> None:
    plan = FaultPlan(forced=(("find_items", 1, "stale"),))
    _, ts = shop_tools(plan)
    first = call(ts, "find_items", name="a")
    assert call(ts, "add_item", name="banana", qty=9).ok
    stale = call(ts, "find_items", name="a")
    fresh = call(ts, "find_items", name="a")
    assert fresh.content != first.content  # the world really changed
    assert stale.ok and stale.stale and stale.fault == "stale"
    assert stale.as_of_call == 0
    assert stale.content == first.content
    assert json.loads(stale.render()) == {"ok": True, "result": first.content, "as_of_call": 0}
    assert not fresh.stale and fresh.as_of_call is None


def test_stale_needs_an_earlier_call_with_same_arguments() -> None:
    plan = FaultPlan(forced=(("find_items", 0, "stale"), ("find_items", 1, "stale")))
    _, ts = shop_tools(plan)
    r0 = call(ts, "find_items", name="apple")
    assert r0.ok and not r0.stale and r0.fault is None
    r1 = call(ts, "find_items", name="pear")  # different arguments: nothing to serve
    assert r1.ok and not r1.stale and r1.fault is None
    assert r1.content == [{"name": "pear", "qty": 1}]


def test_stale_does_nothing_for_write_tools() -> None:
    plan = FaultPlan(forced=(("add_item", 1, "stale"),))
    shop, ts = shop_tools(plan)
    call(ts, "add_item", name="kiwi", qty=1)
    r = call(ts, "add_item", name="kiwi", qty=1)
    assert r.ok and not r.stale and r.fault is None and r.as_of_call is None
    assert [i.name for i in shop.items].count("kiwi") == 2


def test_timeout_on_write_tool_does_not_apply_write() -> None:
    plan = FaultPlan(forced=(("add_item", 0, "timeout"),))
    shop, ts = shop_tools(plan)
    r = call(ts, "add_item", name="kiwi", qty=1)
    assert not r.ok and r.error.kind == "timeout" and r.error.retryable
    assert "kiwi" not in [i.name for i in shop.items]
    assert call(ts, "add_item", name="kiwi", qty=1).ok
    assert [i.name for i in shop.items].count("kiwi") == 1


class TimeoutLedger(LedgerEnv):
    """The ledger with the first transfer forced to time out."""

    def fault_plan(self, task):  # type: ignore[no-untyped-def]
        return FaultPlan(forced=(("transfer", 0, "timeout"),))


def test_ledger_transfer_timeout_leaves_world_unchanged(make_sync) -> None:
    env = make_sync(TimeoutLedger)
    task_id = "ledger.transfer/v1/d1/s251756608"
    env.reset(task_id, 0)
    move = env.env.task.truth["moves"][0]
    args = {"from_account": move["from"], "to_account": move["to"], "amount_cents": move["amount"]}
    before = env.snapshot()
    r = env.step(ToolCall(name="transfer", arguments=args))
    assert r.info["fault"] == "timeout"
    assert r.info["tool_result"]["ok"] is False
    assert r.info["tool_result"]["error"]["kind"] == "timeout"
    assert r.info["tool_result"]["error"]["retryable"] is True
    assert "invalid_call" not in r.reward_components  # a fault is not the agent's mistake
    assert env.snapshot() == before
    assert fingerprint(env.snapshot()) == fingerprint(before)
    # the retry is applied exactly once
    r = env.step(ToolCall(name="transfer", arguments=args))
    assert r.info["tool_result"]["ok"] is True and "fault" not in r.info
    after = env.snapshot()
    assert len(after["transfers"]) == 1
    bal = {a["account_id"]: a["balance_cents"] for a in after["accounts"]}
    bal0 = {a["account_id"]: a["balance_cents"] for a in before["accounts"]}
    assert bal[move["from"]] == bal0[move["from"]] - move["amount"]
    assert bal[move["to"]] == bal0[move["to"]] + move["amount"]


def test_ledger_forced_timeout_on_list_accounts_from_d2(make_sync) -> None:
    env = make_sync()
    env.reset("ledger.transfer/v1/d2/s42", 3)
    r = env.step(ToolCall(name="list_accounts", arguments={"customer_id": "C100"}))
    assert r.info["fault"] == "timeout"
    env.reset("ledger.transfer/v1/d1/s42", 3)
    r = env.step(ToolCall(name="list_accounts", arguments={"customer_id": "C100"}))
    assert "fault" not in r.info and r.info["tool_result"]["ok"] is True


class AsyncShop:
    """Tools that wait on another process: ``async def`` tools, awaited by ``acall``."""

    @tool
    async def lookup(self, name: str) -> dict[str, int]:
        """Look an item up in a remote catalogue.

        Args:
            name: Exact item name.
        """
        import asyncio

        await asyncio.sleep(0)
        if name == "locked":
            raise ToolError("permission_denied", "that item is locked")
        if name == "bug":
            raise KeyError(name)
        return {"qty": len(name)}


def test_async_tools_are_awaited_by_acall_and_refused_by_call() -> None:
    import asyncio

    ts = Toolset(AsyncShop())
    result, _ = asyncio.run(ts.acall(ToolCall(name="lookup", arguments={"name": "pear"})))
    assert result.ok and result.content == {"qty": 4}
    result, _ = asyncio.run(ts.acall(ToolCall(name="lookup", arguments={"name": "locked"})))
    assert result.error is not None and result.error.kind == "permission_denied"
    result, _ = asyncio.run(ts.acall(ToolCall(name="lookup", arguments={"name": "bug"})))
    assert result.error is not None and result.error.kind == "internal"
    assert "KeyError" in result.error.message
    result, _ = asyncio.run(ts.acall(ToolCall(name="lookup", arguments={"name": 3})))
    assert result.error is not None and result.error.kind == "invalid_arguments"
    result, _ = ts.call(ToolCall(name="lookup", arguments={"name": "pear"}))
    assert result.error is not None and result.error.kind == "internal"
    assert "acall" in result.error.message


def test_async_tools_get_the_same_seeded_faults() -> None:
    import asyncio

    def outcomes(ts: Toolset) -> list[str | None]:
        ts.reset("t", 7, FaultPlan(rates={"timeout": 0.5}))
        out = []
        for _ in range(20):
            r, _ = asyncio.run(ts.acall(ToolCall(name="lookup", arguments={"name": "pear"})))
            out.append(r.fault)
        return out

    first = outcomes(Toolset(AsyncShop()))
    assert first == outcomes(Toolset(AsyncShop()))
    assert "timeout" in first and None in first
