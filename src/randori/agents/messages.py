"""Kept for plugins and external code written against the old path: the vocabulary now lives in
`randori.vocabulary`. randori itself never imports this module."""

from randori.vocabulary import Message, Role, ToolCall, ToolResult, Trace, Usage

__all__ = ["Message", "Role", "ToolCall", "ToolResult", "Trace", "Usage"]
