"""Policies for the fake servers that play a competent model on whole suites: each conversation
replays its task's ground truth (one call per turn), then answers. For benchmarks that need real
multi-turn conversations on every case; works with OpenAI and Anthropic request bodies."""

from __future__ import annotations

from typing import Any

from tests.fakes.openai_server import Policy, model_turns


def ground_truths(suite_names: list[str]) -> dict[str, tuple[list[dict[str, Any]], str]]:
    """Task text -> (the tool calls of its ground truth, its answer), for user prompts and injection goals."""
    from randori.suites import get_suite

    table: dict[str, tuple[list[dict[str, Any]], str]] = {}
    for name in suite_names:
        s = get_suite(name)
        for task in [*s.user_tasks.values(), *s.injection_tasks.values()]:
            text = getattr(task, "prompt", None) or task.goal
            calls = [{"function": c.function, "args": c.args} for c in task.ground_truth(s.load_env())]
            table[text] = (calls, task.ground_truth_output or "Done.")
    return table


def first_user_text(request: dict[str, Any]) -> str:
    content = next(m["content"] for m in request["messages"] if m["role"] == "user")
    if isinstance(content, list):  # Anthropic blocks
        return "".join(b.get("text", "") for b in content if b.get("type") == "text")
    return str(content)


def ground_truth_policy(suite_names: list[str]) -> Policy:
    table = ground_truths(suite_names)

    def policy(request: dict[str, Any]) -> Any:
        steps, answer = table.get(first_user_text(request), ([], "Done."))
        k = model_turns(request)
        if k < len(steps):
            return [(steps[k]["function"], steps[k]["args"])]
        return answer

    return policy
