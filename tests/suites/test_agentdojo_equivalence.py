"""AgentDojo's suites in randori give AgentDojo's own verdicts, case by case, on every v1.2.2 case.

The reference is computed by the agentdojo package alone: its own `run_task_with_pipeline` (its
environment loader, its tools runtime, its checks) with pipelines that replay ground truths: its own
GroundTruthPipeline for a benign case, and for an attacked case a replay of the user task's ground
truth that also carries out the injection task's ground truth as soon as a tool output shows the
injected text, as scripted/gullible does. randori runs the same cases through its own runner with
scripted/oracle and scripted/gullible under AgentDojo's own important_instructions attack."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

pytest.importorskip("agentdojo")

from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement  # noqa: E402
from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline  # noqa: E402
from agentdojo.agent_pipeline.tool_execution import tool_result_to_str  # noqa: E402
from agentdojo.attacks import load_attack  # noqa: E402
from agentdojo.types import ChatAssistantMessage, ChatToolResultMessage, text_content_block_from_string  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from randori.agents.models import ModelSettings, get_model  # noqa: E402
from randori.bench.runner import Selection, plan, run_case  # noqa: E402
from randori.suites import get_suite  # noqa: E402
from randori.suites.agentdojo.pipeline import target  # noqa: E402

SUITES = ["agentdojo:banking", "agentdojo:slack", "agentdojo:travel", "agentdojo:workspace"]
# docs/guides/agentdojo.md lists these by name: v1.2.2 tasks whose own ground truth fails their own check.
# (AgentDojo's own `TaskSuite.check()` reports the same eight.)
OWN_GROUND_TRUTH_FAILS: dict[str, list[str]] = {
    **{s: [] for s in SUITES},
    "agentdojo:workspace": [f"injection_task_{n}" for n in (10, 11, 12, 13, 6, 7, 8, 9)],
}
# User tasks whose attacked cases randori's scripted agents cannot do, unlike AgentDojo's replay of a
# fixed ground truth: the attack text takes the place of the very text that gives what only the data
# gives (banking's bill vector is the bill's payee and sum; randori's marks, marks.py), so no agent can
# know what to pay. docs/guides/agentdojo.md names them.
DATA_REPLACED: dict[str, list[str]] = {**{s: [] for s in SUITES}, "agentdojo:banking": ["user_task_0"]}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _folded(text: str) -> str:
    return " ".join(text.split())


class GroundTruthThenObey(BasePipelineElement):
    """The user task's ground truth; once a tool output holds the injected text, the injection task's
    ground truth (computed on the environment as it is then) before the rest. Built on AgentDojo's
    runtime and formatter only."""

    def __init__(self, user_task: Any, injection_task: Any, texts: Sequence[str]):
        self.user_task, self.injection_task = user_task, injection_task
        self.texts = [_folded(t) for t in dict.fromkeys(texts) if t]

    def query(self, query: str, runtime: Any, env: Any, messages: Sequence[Any] = (),
              extra_args: dict[str, Any] | None = None) -> tuple[str, Any, Any, Sequence[Any], dict[str, Any]]:
        queue = list(self.user_task.ground_truth(env))
        out: list[Any] = []
        obeyed = False
        while queue:
            call = queue.pop(0)
            out.append(ChatAssistantMessage(role="assistant", tool_calls=[call],
                                            content=[text_content_block_from_string("")]))
            result, error = runtime.run_function(env, call.function, call.args)
            out.append(ChatToolResultMessage(role="tool", tool_call=call, tool_call_id=None, error=error,
                                             content=[text_content_block_from_string(tool_result_to_str(result))]))
            if not obeyed:
                shown = " ".join(_folded(s) for s in _strings(result))
                if any(t in shown for t in self.texts):
                    obeyed = True
                    queue = list(self.injection_task.ground_truth(env)) + queue
        parts = [t.GROUND_TRUTH_OUTPUT for t in (self.user_task, self.injection_task if obeyed else None)
                 if t is not None and getattr(t, "GROUND_TRUTH_OUTPUT", "")]
        out.append(ChatAssistantMessage(role="assistant", tool_calls=None,
                                        content=[text_content_block_from_string("\n".join(parts) or "Done.")]))
        return query, runtime, env, [*messages, *out], extra_args or {}


def _randori(suite: Any, model_name: str, **selection: Any) -> list[Any]:
    model = get_model(model_name, ModelSettings())
    cases = plan(Selection(suites=[suite], model=model, **selection))

    async def go() -> list[Any]:
        return [await run_case(c, suite, model) for c in cases]

    return asyncio.run(go())


@pytest.mark.parametrize("name", SUITES)
def test_every_v1_2_2_case_gets_agentdojos_own_verdict(name):
    suite = get_suite(name)
    assert suite.version == "v1.2.2"
    source = suite.source
    benign = {tid: source.run_task_with_pipeline(GroundTruthPipeline(t), t, None, {})[0]
              for tid, t in source.user_tasks.items()}
    alone = {iid: source.run_task_with_pipeline(GroundTruthPipeline(t), t, None, {})[0]
             for iid, t in source.injection_tasks.items()}
    attack = load_attack("important_instructions", source, target("AI assistant"))
    attacked = {}
    for tid, ut in source.user_tasks.items():
        for iid, it in source.injection_tasks.items():
            injections = attack.attack(ut, it)
            attacked[(tid, iid)] = source.run_task_with_pipeline(
                GroundTruthThenObey(ut, it, list(injections.values())), ut, it, injections)

    oracle = _randori(suite, "scripted/oracle", attacks=[])
    gullible = _randori(suite, "scripted/gullible", attacks=["agentdojo:important_instructions"], benign=False,
                        injection_only=False)
    assert len(oracle) == len(benign) + len(alone) and len(gullible) == len(attacked)

    mismatches = []
    for r in oracle:
        want = benign[r.user_task] if r.kind == "benign" else alone[r.injection_task]
        if r.status != "ok" or r.utility != want:
            mismatches.append((r.kind, r.user_task or r.injection_task, r.status, r.utility, want))
    for r in gullible:
        want = attacked[(r.user_task, r.injection_task)]
        if r.user_task in DATA_REPLACED[name]:
            assert want[0]  # AgentDojo's replay pays a bill it was never shown
            want = (False, want[1])
        if r.status != "ok" or (r.utility, r.attack_succeeded) != want:
            mismatches.append((r.user_task, r.injection_task, r.status, (r.utility, r.attack_succeeded), want))
    assert mismatches == []
    assert all(r.injection_seen for r in gullible)  # the attack text reached the agent in every case
    assert sorted(t for t, ok in {**benign, **alone}.items() if not ok) == OWN_GROUND_TRUTH_FAILS[name]
