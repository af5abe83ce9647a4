"""Who writes the code: a chat model (any provider `get_model` knows) or a scripted coder.

Scripted coders (`scripted/<kind>`) make every path of the loop testable offline:
- `insecure-then-secure`: the task's insecure reference first, the secure one after any feedback;
- `secure` / `insecure`: always that reference;
- `invalid`: never writes code that parses;
- `hostile`: writes programs that attack the harness (see `HOSTILE_KINDS`), one per task.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Protocol

from randori.agents.models import ModelSettings, get_model
from randori.agents.models.base import ChatModel
from randori.code.dataset import CodeTask
from randori.vocabulary import Message, Usage

SCRIPTED_KINDS = ("insecure-then-secure", "secure", "insecure", "invalid", "hostile")
HOSTILE_KINDS = ("fork-bomb", "memory-bomb", "endless-loop", "write-outside", "open-socket",
                 "kill-parent", "leave-daemon")
HOSTILE_PORT = 47631
HOSTILE_MARKER = "randori-hostile-escape"


@dataclass
class CoderReply:
    text: str  # the raw reply (what a model said)
    code: str  # the code extracted from it
    usage: Usage


class Coder(Protocol):
    name: str

    async def write(self, task: CodeTask, messages: list[Message], round_no: int) -> CoderReply:
        """Code for `task`; `messages` is the conversation so far (prompt, replies, feedback)."""
        ...

    async def aclose(self) -> None: ...


# -- extracting code from a model's reply --------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


def extract_code(text: str, entry_point: str) -> str:
    """The Python code in a reply: the fenced block that defines the entry point (the last one if
    the model revised itself), else the longest Python block, else the whole reply if it parses."""
    body = _THINK.sub("", text)
    blocks = [(lang.lower(), code) for lang, code in _FENCE.findall(body)]
    python = [c for lang, c in blocks if lang in ("", "python", "py", "python3")]
    defining = [c for c in python if re.search(rf"^\s*(async\s+)?def\s+{re.escape(entry_point)}\s*\(", c, re.M)]
    if defining:
        return defining[-1].strip("\n") + "\n"
    if python:
        return max(python, key=len).strip("\n") + "\n"
    stripped = body.strip()
    try:
        compile(stripped, "reply", "exec")
        return stripped + "\n"
    except (SyntaxError, ValueError):
        return stripped + "\n"  # left as is: the loop reports it as code that does not parse


# -- model-backed coder -------------------------------------------------------------------------

class ModelCoder:
    def __init__(self, model: ChatModel):
        self.model = model
        self.name = model.name

    async def write(self, task: CodeTask, messages: list[Message], round_no: int) -> CoderReply:
        msg = await self.model.complete(messages, [], None)
        return CoderReply(text=msg.content, code=extract_code(msg.content, task.entry_point),
                          usage=msg.usage or Usage(model_calls=1))

    async def aclose(self) -> None:
        await self.model.aclose()


# -- scripted coders ----------------------------------------------------------------------------

def _fence(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"


class ScriptedCoder:
    def __init__(self, kind: str):
        if kind not in SCRIPTED_KINDS:
            from randori.registry import unknown

            raise unknown("scripted coder", kind, SCRIPTED_KINDS)
        self.kind = kind
        self.name = f"scripted/{kind}"

    async def write(self, task: CodeTask, messages: list[Message], round_no: int) -> CoderReply:
        if self.kind == "secure":
            code = task.secure_code
        elif self.kind == "insecure":
            code = task.insecure_code
        elif self.kind == "insecure-then-secure":
            code = task.insecure_code if round_no == 0 else task.secure_code
        elif self.kind == "invalid":
            code = f"def {task.entry_point}(:\n    return  # this never parses\n"
        else:
            code = hostile_program(hostile_kind_for(task.id), task.entry_point)
        text = f"Here is the implementation.\n\n{_fence(code)}\n"
        return CoderReply(text=text, code=extract_code(text, task.entry_point),
                          usage=Usage(model_calls=1, input_tokens=0, output_tokens=0))

    async def aclose(self) -> None:
        return None


def hostile_kind_for(task_id: str) -> str:
    digest = hashlib.sha256(task_id.encode()).digest()
    return HOSTILE_KINDS[digest[0] % len(HOSTILE_KINDS)]


def hostile_program(kind: str, entry_point: str = "solution", *, marker: str = HOSTILE_MARKER,
                    port: int = HOSTILE_PORT) -> str:
    """Code that attacks whatever runs it; the sandbox must contain each of these.

    Network attempts only ever target the loopback address: outside a network namespace they
    must not send traffic anywhere else."""
    head = f"def {entry_point}(*args, **kwargs):\n"
    bodies = {
        "fork-bomb": (
            "    import os\n"
            "    while True:\n"
            "        try:\n"
            "            os.fork()\n"
            "        except OSError:\n"
            "            pass\n"),
        "memory-bomb": (
            "    hoard = []\n"
            "    while True:\n"
            "        hoard.append(bytearray(64 * 1024 * 1024))\n"),
        "endless-loop": (
            "    n = 0\n"
            "    while True:\n"
            "        n += 1\n"),
        "write-outside": (
            "    import os\n"
            f"    targets = ['/tmp/{marker}', '../{marker}', '/var/tmp/{marker}', '/dev/shm/{marker}',\n"
            f"               os.path.expanduser('~/{marker}'), '/{marker}', '/root/{marker}']\n"
            "    written = []\n"
            "    for t in targets:\n"
            "        try:\n"
            "            with open(t, 'w') as fh:\n"
            "                fh.write('escaped')\n"
            "            written.append(t)\n"
            "        except OSError:\n"
            "            pass\n"
            "    return written\n"),
        "open-socket": (
            "    import socket\n"
            "    results = []\n"
            "    try:\n"
            f"        s = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
            f"        s.sendall(b'{marker}')\n"
            "        s.close()\n"
            "        results.append('connected')\n"
            "    except OSError as e:\n"
            "        results.append(repr(e))\n"
            "    try:\n"
            "        srv = socket.socket()\n"
            "        srv.bind(('0.0.0.0', 0))\n"
            "        srv.listen()\n"
            "        results.append(srv.getsockname())\n"
            "    except OSError as e:\n"
            "        results.append(repr(e))\n"
            "    return results\n"),
        "kill-parent": (
            "    import os, signal\n"
            "    for target in (os.getppid(), -1):\n"
            "        try:\n"
            "            os.kill(target, signal.SIGKILL)\n"
            "        except OSError:\n"
            "            pass\n"
            "    return 'still here'\n"),
        "leave-daemon": (
            "    import os\n"
            "    if os.fork() == 0:\n"
            "        os.setsid()\n"
            "        if os.fork() == 0:\n"
            f"            os.execv('/bin/sh', ['/bin/sh', '-c', 'sleep 300; : {marker}'])\n"
            "        os._exit(0)\n"
            "    return 'daemon started'\n"),
    }
    if kind not in bodies:
        raise ValueError(f"unknown hostile program {kind}")
    return head + bodies[kind]


# -- resolution ---------------------------------------------------------------------------------

def get_coder(name: str, settings: ModelSettings | None = None, *, base_url: str | None = None) -> Coder:
    provider, sep, rest = name.partition("/")
    if provider == "scripted" and sep:
        return ScriptedCoder(rest)
    options: dict[str, Any] = {"base_url": base_url} if base_url else {}
    return ModelCoder(get_model(name, settings or ModelSettings(), **options))
