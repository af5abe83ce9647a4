"""A minimal Python agent for randori, on the OpenAI SDK (any OpenAI-compatible server works).

    randori run --suite banking --agent examples.agents.openai_minimal:agent --agent-version 1

randori calls `agent(case)` once per case: `case.prompt` is the user's request, `case.instructions`
the system prompt, `case.current_tools()` the tools as they are now (name, description, JSON schema;
asked on every turn, since a description may change after a call) and `await case.call(name,
arguments)` runs one in the case's environment and returns what the model reads, and
`case.add_usage(...)` reports each model call's tokens. The return value is the final answer.
Model: $EXAMPLE_MODEL (default gpt-4o-mini); the client reads OPENAI_API_KEY and OPENAI_BASE_URL as
usual."""

from __future__ import annotations

import os
from typing import Any

from openai import AsyncOpenAI

MAX_TURNS = 20


async def agent(case: Any) -> str:
    client = AsyncOpenAI()
    messages: list[Any] = [{"role": "system", "content": case.instructions},
                           {"role": "user", "content": case.prompt}]
    try:
        for _ in range(MAX_TURNS):
            tools: Any = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                            "parameters": t.parameters}} for t in case.current_tools()]
            reply = await client.chat.completions.create(model=os.environ.get("EXAMPLE_MODEL", "gpt-4o-mini"),
                                                         messages=messages, tools=tools, temperature=0)
            if reply.usage is not None:  # randori cannot see this call: say what it used (report, cost)
                details = reply.usage.prompt_tokens_details
                case.add_usage(reply.usage.prompt_tokens, reply.usage.completion_tokens,
                               cached_input_tokens=(details.cached_tokens or 0) if details else 0)
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content or ""
            for call in message.tool_calls:
                output = await case.call(call.function.name, call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
        return ""
    finally:
        await client.close()
