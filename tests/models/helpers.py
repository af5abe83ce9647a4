"""Run one banking case through a real provider against a fake server."""

import asyncio

from randori.agents.models import ModelSettings, get_model
from randori.bench.runner import Selection, plan, run_case
from randori.suites.banking import suite as banking

# user_task_1 asks whether a refund arrived; this conversation does it right.
REFUND_STEPS = [[("search_transactions", {"query": "Brightwave"})], "They refunded 129.00 EUR."]


def run_one(model_name, server, *, settings=None, user_task="user_task_1", **options):
    options.setdefault("retry_base_delay", 0.001)
    model = get_model(model_name, settings or ModelSettings(), base_url=server.base_url, **options)
    [case] = plan(Selection(suites=[banking], model=model, attacks=[], user_tasks=[user_task],
                            injection_only=False))

    async def go():
        try:
            return await run_case(case, banking, model)
        finally:
            await model.aclose()

    return asyncio.run(go())


def tool_errors(result):
    return [m["tool_result"]["error"] for m in result.messages
            if m["role"] == "tool" and m["tool_result"].get("error")]


def annotations(result):
    return [a for m in result.messages for a in m.get("annotations", [])]
