"""The functions runtime: typed Python functions exposed to models as tools."""

from randori.tools.function import Env, Tool, tool
from randori.tools.lookup import by_id
from randori.tools.runtime import render, run_tool

__all__ = ["Env", "Tool", "tool", "run_tool", "render", "by_id"]
