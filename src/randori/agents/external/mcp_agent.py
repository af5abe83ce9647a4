"""`--agent "mcp:COMMAND"`: an MCP client process, run in a container, that solves each case through
the case's own MCP server (`randori.agents.external.mcp`)."""

from __future__ import annotations

import shlex
from typing import Any

from randori.agents.external.mcp import parse_command
from randori.agents.external.process import ProcessAgent
from randori.errors import scrub_secrets


class McpAgent(ProcessAgent):
    def __init__(self, command: str, version: str | None, limit: float, **options: Any):
        argv = parse_command(command)
        # The name is stored and shown: a key written into the command line must not be.
        super().__init__(scrub_secrets("mcp:" + shlex.join(argv)), argv, version, limit, **options)
