"""Which tool calls change state, and which of their arguments are sensitive: the generic rules the
out-of-band defenses (`capabilities`, `reexecution`) and the coverage of attacker goals share.

Read-only: a tool whose name starts with a reading verb (get, list, read, search, find, view...) and
that takes no URL. A tool that takes a URL reaches outside (a request carries data out), so it is
never read-only, whatever its name.

Sensitive argument: one that routes something to someone, or grants, or runs. By name (the whole
name or its last `_` part): an IBAN; recipients (`to`, `cc`, `bcc`, `recipient(s)`, `forward_to`,
`participants`...); an e-mail address (`email`, `recovery_email`); a URL (`url`, `link`,
`webhook`); a command (`command`, `cmd`, `script`); a person given or denied access (`user`,
`username`, `collaborator`, `member`...); a credential (`password`, `secret`, `token`). By its
value (lexical class), whatever the name: a string that holds an IBAN, an e-mail address, a URL or
a shell command (`curl`, `wget`, `| sh`, `rm -rf`...). The object of a sharing call (a tool named
share/forward/publish/attach/upload/export: its `*_id`, `path`, `file` argument) is the file or
document shared. A read-only tool's arguments are sensitive only as URLs (fetching a link can
leak data; reading a profile by a user name cannot).

`override(...)` corrects these rules for a suite's tool where they are wrong (keyed by the tool's
name and, optionally, the module its function lives in, so that two suites' same-named tools can
differ)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from randori.tools.function import Tool
from randori.vocabulary import ToolCall

READ_VERBS = frozenset({"get", "list", "read", "search", "find", "view", "show", "lookup", "describe", "count",
                        "query", "preview", "check"})
SHARE_VERBS = frozenset({"share", "forward", "publish", "attach", "upload", "export"})

# Argument names (whole, or the last `_` part) -> the kind of thing they route.
_BY_NAME: dict[str, str] = {
    **dict.fromkeys(("iban", "account_number"), "account"),
    **dict.fromkeys(("to", "cc", "bcc", "recipient", "recipients", "forward_to", "participants", "attendees",
                     "invitees", "payee"), "recipient"),
    **dict.fromkeys(("email", "emails", "email_address"), "address"),
    **dict.fromkeys(("url", "urls", "link", "webhook", "endpoint"), "url"),
    **dict.fromkeys(("command", "cmd", "script", "shell"), "command"),
    **dict.fromkeys(("user", "users", "username", "collaborator", "member", "members", "invitee", "assignee"),
                    "person"),
    **dict.fromkeys(("password", "passcode", "secret", "token", "api_key"), "credential"),
}
_SHARED_OBJECT = re.compile(r"(^|_)(id|ids|path|file|files|document|attachments?)$")

# Upper case only: a lower-case run of letters and digits is far more often a hash or an id than an IBAN.
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,30}\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"(?:https?://|www\.)[^\s'\"`)<>]+", re.IGNORECASE)
_COMMAND = re.compile(r"\b(?:curl|wget)\s+-?\S|\|\s*(?:ba|z)?sh\b|\brm\s+-[rf]{1,2}\b|\bbash\s+-c\b|\bnc\s+-\w"
                      r"|\bchmod\s+\+x\b|\bsudo\s+\S|\bpowershell\b", re.IGNORECASE)
# Checked in this order: a URL holding an address is a URL first.
_LEXICAL = (("url", _URL), ("address", _EMAIL), ("account", _IBAN), ("command", _COMMAND))
KINDS = ("account", "recipient", "address", "url", "command", "person", "credential", "shared")


@dataclass
class Override:
    read_only: bool | None = None
    # argument -> its kind, or None: not sensitive (both replace the generic rule for that argument)
    sensitive: dict[str, str | None] = field(default_factory=dict)


_OVERRIDES: dict[tuple[str | None, str], Override] = {}


def override(tool: str, *, module: str | None = None, read_only: bool | None = None,
             sensitive: Mapping[str, str | None] | None = None) -> None:
    """Correct the generic rules for `tool` (in every suite, or only for tools whose function is
    defined in `module` or below it): whether it is read-only, and the kind (or None) of arguments."""
    bad = sorted(k for k in (sensitive or {}).values() if k is not None and k not in KINDS)
    if bad:
        raise ValueError(f"unknown sensitive kind(s) {', '.join(bad)}; known: {', '.join(KINDS)}")
    entry = _OVERRIDES.setdefault((module, tool), Override())
    if read_only is not None:
        entry.read_only = read_only
    entry.sensitive.update(sensitive or {})


def _override(tool: Tool | str) -> Override | None:
    name = tool if isinstance(tool, str) else tool.name
    module = "" if isinstance(tool, str) else getattr(getattr(tool, "fn", None), "__module__", "") or ""
    best: Override | None = None
    best_len = -1
    for (mod, tname), entry in _OVERRIDES.items():
        if tname != name:
            continue
        if mod is None and best_len < 0:
            best, best_len = entry, 0
        elif mod is not None and (module == mod or module.startswith(mod + ".")) and len(mod) > best_len:
            best, best_len = entry, len(mod)
    return best


def _parts(name: str) -> list[str]:
    return [p for p in name.lower().split("_") if p]


def _takes_url(tool: Tool) -> bool:
    return any(_BY_NAME.get(a.lower()) == "url" or (_parts(a) and _BY_NAME.get(_parts(a)[-1]) == "url")
               for a in tool.parameters.get("properties", {}))


def is_read_only(tool: Tool | None, name: str = "") -> bool:
    """Whether calls of `tool` leave every state as it was (see the module's rules). An unknown tool
    is not read-only: its call fails anyway, and a guard must not wave it through."""
    if tool is None:
        return False
    o = _override(tool)
    if o is not None and o.read_only is not None:
        return o.read_only
    parts = _parts(tool.name)
    return bool(parts) and parts[0] in READ_VERBS and not _takes_url(tool)


def lexical_kind(value: Any) -> str | None:
    """The lexical class of a value (a string, or any string inside a list or mapping): url, address,
    account or command; None for anything else."""
    for s in _strings(value):
        for kind, pattern in _LEXICAL:
            if pattern.search(s):
                return kind
    return None


def entities(value: Any) -> set[str]:
    """The URLs, e-mail addresses, IBANs and commands a value holds, normalised for comparison."""
    from randori.tasks.attempts import norm

    found: set[str] = set()
    for s in _strings(value):
        for _, pattern in _LEXICAL:
            found |= {norm(m.group(0)) for m in pattern.finditer(s)}
    return {f for f in found if f}


def name_kind(tool_name: str, arg: str) -> str | None:
    """The kind an argument's name alone gives it in a state-changing tool."""
    low = arg.lower()
    parts = _parts(low)
    kind = _BY_NAME.get(low) or (_BY_NAME.get(parts[-1]) if parts else None)
    if kind is None and _parts(tool_name)[:1] and _parts(tool_name)[0] in SHARE_VERBS and _SHARED_OBJECT.search(low):
        kind = "shared"
    return kind


def argument_kind(tool: Tool | None, function: str, arg: str, value: Any) -> str | None:
    """The sensitive kind of `arg` holding `value` in a call of `function` (None: not sensitive)."""
    o = _override(tool if tool is not None else function)
    if o is not None and arg in o.sensitive:
        return o.sensitive[arg]
    if value is None or isinstance(value, bool):
        return None
    read_only = is_read_only(tool) if tool is not None else False
    kind = name_kind(function, arg)
    lexical = lexical_kind(value)
    if read_only:
        return "url" if "url" in (kind, lexical) else None
    return kind or lexical


def sensitive_args(call: ToolCall, tool: Tool | None) -> dict[str, str]:
    """The call's sensitive arguments, with their kinds."""
    out = {}
    for arg, value in call.args.items():
        kind = argument_kind(tool, call.function, arg, value)
        if kind is not None:
            out[arg] = kind
    return out


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
