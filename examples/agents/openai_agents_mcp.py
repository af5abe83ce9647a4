"""An agent built with the OpenAI Agents SDK (`pip install openai-agents`) that uses randori's MCP
server: randori starts this script once per case.

    randori run --suite banking --agent "mcp:python examples/agents/openai_agents_mcp.py" --agent-version 1

randori sets RANDORI_MCP_URL (the case's tools, streamable HTTP), RANDORI_PROMPT (the user's request)
and RANDORI_INSTRUCTIONS (the system prompt); the final answer is what this script prints. Model:
$EXAMPLE_MODEL (default gpt-4o-mini) through the Chat Completions API, so any OpenAI-compatible
server works (OPENAI_BASE_URL, OPENAI_API_KEY)."""

from __future__ import annotations

import asyncio
import os

from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled


async def main() -> None:
    set_tracing_disabled(True)  # the SDK would otherwise upload a trace of every case to OpenAI
    model = OpenAIChatCompletionsModel(model=os.environ.get("EXAMPLE_MODEL", "gpt-4o-mini"),
                                       openai_client=AsyncOpenAI())
    # cache_tools_list=True keeps the first listing for the whole case, so a tool description that
    # changes after the first call (the rug_pull attack) never reaches the model; with False the SDK
    # lists the tools again on every turn.
    async with MCPServerStreamableHttp(params={"url": os.environ["RANDORI_MCP_URL"]}, name="randori",
                                       cache_tools_list=True) as tools:
        agent = Agent(name="assistant", instructions=os.environ.get("RANDORI_INSTRUCTIONS", ""), model=model,
                      mcp_servers=[tools])
        result = await Runner.run(agent, os.environ["RANDORI_PROMPT"], max_turns=30)
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
