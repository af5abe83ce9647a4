"""An external agent that runs as a process in its container (`container.py`) and reaches the case's
tools over MCP: an MCP client (`--agent "mcp:COMMAND"`) or a Python agent's worker (`worker.py`).

One process per case by default: the case's server URL, prompt and instructions are in its
environment, and its answer is what it wrote on stdout when it exited. With `--agent-reuse N` (and
always for the Python worker) a process serves up to N cases in turn, a fresh MCP session each: it
reads one JSON line per case on stdin ({"url", "prompt", "instructions", "timeout", "usage_file"}) and
answers each with one JSON line on stdout ({"answer": TEXT}, or {"error": TEXT}). A process whose
case fails (crash, time limit, a defense's abort) is killed with all it started, and serves no more."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from randori.agents.external.container import (
    AgentProcess,
    Containment,
    bwrap_command,
    containment,
    stores_under,
    visible_paths,
)
from randori.agents.external.mcp import FORWARDED_PORT, preload, serve
from randori.agents.external.session import AgentCase, Driver, ExternalSpec, usage_of
from randori.errors import AgentFailure
from randori.sandboxing import socket_dir

# The environment of an agent process (documented in docs/guides/your-own-agent.md).
URL_ENV = "RANDORI_MCP_URL"
PROMPT_ENV = "RANDORI_PROMPT"
INSTRUCTIONS_ENV = "RANDORI_INSTRUCTIONS"
TIMEOUT_ENV = "RANDORI_TIMEOUT"
USAGE_ENV = "RANDORI_USAGE_FILE"  # the agent appends one JSON object per model call: its tokens
REUSE_ENV = "RANDORI_REUSE"  # set (to N) when the process is given cases on stdin, up to N of them
MAX_USAGE = 10_000_000  # bytes of usage reports read
STDERR_TAIL = 2000  # characters of an agent's stderr kept for its error message
MAX_ANSWER = 1_000_000  # bytes of stdout an answer may take
FORWARDER = Path(__file__).with_name("forwarder.py")
READY = b'{"ready": true}'  # a worker's first line, once it has imported the agent
START_WAIT = 300.0  # seconds a worker may take to import its agent


class Worker:
    """One agent process, its own folder (bound writable into its container) and the cases it served."""

    def __init__(self, spec: ProcessAgent, env: dict[str, str], folder: str, *, lines: bool):
        self.folder = folder
        self.served = 0
        env = {**env, USAGE_ENV: self.usage_file()} if not lines else env
        argv = spec.argv
        if spec.contained.network == "none":
            forward = [str(FORWARDER), socket_in(folder), str(FORWARDED_PORT), "--"]
            argv = [os.path.realpath(sys.executable), "-I", "-S", *forward, *argv]
        if spec.contained.kind == "namespaces":
            argv = bwrap_command(argv, spec.contained, spec.visible, spec.hidden, [folder, *spec.writable])
        try:
            self.proc = AgentProcess(argv, env, spec.contained, answer_cap=MAX_ANSWER,
                                     stderr_tail=4 * STDERR_TAIL, stdin=lines)
        except OSError as e:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise AgentFailure("agent_crash", f"cannot start {spec.argv[0]}: {e.strerror or e}") from None

    def usage_file(self) -> str:
        return os.path.join(self.folder, f"usage-{self.served}.jsonl")

    async def close(self) -> None:
        try:
            await self.proc.close()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def abandon(self) -> None:
        self.proc.abandon()
        shutil.rmtree(self.folder, ignore_errors=True)

    async def failure(self, otherwise: str = "the agent closed its stdout without answering") -> AgentFailure:
        """Why it stopped answering: it wrote too much, or it exited; else `otherwise`."""
        if self.proc.out.over:
            return AgentFailure("agent_crash", f"the agent wrote more than {MAX_ANSWER:,} bytes on stdout (the "
                                               "answer's limit); it was stopped")
        with contextlib.suppress(asyncio.TimeoutError):
            code = await asyncio.wait_for(self.proc.wait(), 5)
            return exited(code, self.proc.err.text())
        return AgentFailure("agent_crash", otherwise)


def new_folder() -> str:
    """The case's private folder (mode 0700), short enough for its socket (`socket_in`)."""
    return socket_dir("randori-agent-", "mcp.sock")


def socket_in(folder: str) -> str:
    """Where the case's server listens when the agent has no network (its forwarder connects here)."""
    return os.path.join(folder, "mcp.sock")


def exited(code: int, errors: str) -> AgentFailure:
    how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
    errors = errors.strip()[-STDERR_TAIL:]
    detail = f"; its stderr ends: {errors}" if errors else " (no stderr)"
    return AgentFailure("agent_crash", f"the agent process {how}{detail}")


class ProcessDriver(Driver):
    def __init__(self, spec: ProcessAgent):
        self.spec = spec

    async def prepare(self) -> None:
        if self.spec.lines:
            self.worker = await self.spec.take()

    async def run(self, case: AgentCase) -> str:
        if self.spec.lines:
            return await self._reused(case, self.worker)
        return await self._once(case)

    def _serve(self, case: AgentCase, folder: str) -> AbstractAsyncContextManager[str]:
        return serve(case, unix=socket_in(folder) if self.spec.contained.network == "none" else None)

    async def _once(self, case: AgentCase) -> str:
        folder = new_folder()
        try:
            async with self._serve(case, folder) as url:
                env = {**os.environ, URL_ENV: url, PROMPT_ENV: case.prompt, INSTRUCTIONS_ENV: case.instructions}
                if case.timeout is not None:
                    env[TIMEOUT_ENV] = f"{case.timeout:g}"
                worker = Worker(self.spec, env, folder, lines=False)
                try:
                    code = await worker.proc.wait()
                except BaseException:  # stopped: what it spent until then still counts
                    await worker.proc.close()
                    read_usage_after(case, worker.usage_file(), ok=False)
                    raise
                # At its exit the container goes: helpers that still hold its stdout cannot keep the answer.
                await worker.proc.close()
            ok = code == 0 and not worker.proc.out.over
            read_usage_after(case, worker.usage_file(), ok=ok)
            if worker.proc.out.over:
                raise await worker.failure()
            if code != 0:
                raise exited(code, worker.proc.err.text())
            return worker.proc.out.text().strip()
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    async def _reused(self, case: AgentCase, worker: Worker) -> str:
        usage_file = worker.usage_file()
        healthy = False
        try:
            async with self._serve(case, worker.folder) as url:
                request = {"url": url, "prompt": case.prompt, "instructions": case.instructions,
                           "timeout": case.timeout, "usage_file": usage_file}
                if not worker.proc.write((json.dumps(request) + "\n").encode()):
                    raise await worker.failure("the agent does not read its cases on stdin (--agent-reuse)")
                line = await worker.proc.out.line()
                if line is None:
                    raise await worker.failure()
                reply = _reply(line)
                healthy = True
        finally:
            worker.served += 1
            keep = healthy and worker.served < self.spec.reuse
            if not healthy:
                await worker.proc.close()
            try:
                read_usage_after(case, usage_file, ok=healthy)
            finally:
                if keep:
                    self.spec.give_back(worker)
                else:
                    await worker.close()
        if "error" in reply:
            raise AgentFailure("agent_crash", str(reply["error"]))
        return str(reply["answer"]).strip()


def _reply(line: bytes) -> dict[str, Any]:
    try:
        reply = json.loads(line)
    except ValueError:
        reply = None
    if not isinstance(reply, dict) or not (isinstance(reply.get("answer"), str) or "error" in reply):
        raise AgentFailure("agent_crash", 'the agent answered a case with a line that is not {"answer": TEXT}: '
                                          f"{line[:200].decode('utf-8', 'replace')}")
    return reply


def read_usage_after(case: AgentCase, path: str, *, ok: bool) -> None:
    """Read the case's usage reports. After a failure, what it spent still counts, and the failure
    in flight says more than a malformed report."""
    if ok:
        read_usage(case, path)
        return
    with contextlib.suppress(AgentFailure):
        read_usage(case, path)


def read_usage(case: AgentCase, path: str) -> None:
    """Add what the agent process reported in $RANDORI_USAGE_FILE (one JSON object a line, e.g.
    {"input_tokens": 812, "output_tokens": 40}) to the case; a malformed report fails the case."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_USAGE + 1)
    except FileNotFoundError:
        return  # the agent reports nothing
    if len(data) > MAX_USAGE:
        raise AgentFailure("agent_crash", f"${USAGE_ENV} holds more than {MAX_USAGE:,} bytes")
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            counts = json.loads(line)
            if not isinstance(counts, dict):
                raise ValueError(f"expected a JSON object, got {type(counts).__name__}")
            case.usage = case.usage + usage_of(counts)
        except ValueError as e:  # json.JSONDecodeError is one
            raise AgentFailure("agent_crash", f"${USAGE_ENV} line {n}: {e}") from None


class ProcessAgent(ExternalSpec):
    """An agent run as `argv` in a container. `lines`: it takes cases on stdin (always for a worker;
    for an MCP client with `reuse` > 1); `reuse`: cases one process serves at most."""

    def __init__(self, name: str, argv: Sequence[str], version: str | None, limit: float | None, *,
                 reuse: int = 1, lines: bool = False, handshake: bool = False, network: str = "open",
                 binds: Sequence[str] = (), hidden: Sequence[str] = (), extra_visible: Sequence[str] = ()):
        super().__init__(name, version, limit)
        self.argv = list(argv)
        self.handshake = handshake
        self.reuse = reuse
        self.lines = lines or reuse > 1
        self.contained: Containment = containment(network)
        self.writable = [os.path.realpath(b[:-3]) for b in binds if b.endswith(":rw")]
        readable = [b for b in binds if not b.endswith(":rw")]
        if self.contained.network == "none":  # its forwarder runs on randori's interpreter
            readable += [sys.base_prefix, str(FORWARDER.parent)]
        self.visible = visible_paths(self.argv, [*readable, *extra_visible])
        # Other runs' stores below what the agent sees too, as they are when the run starts.
        self.hidden = [*hidden, *stores_under([*self.visible, *self.writable])] \
            if self.contained.kind == "namespaces" else list(hidden)
        self._idle: dict[asyncio.AbstractEventLoop, list[Worker]] = {}
        preload()
        _AGENTS.append(self)

    def isolation(self) -> dict[str, Any]:
        return {"agent_isolation": self.contained.kind, "agent_network": self.contained.network,
                "agent_reuse": self.reuse, **({"agent_isolation_note": self.contained.note}
                                              if self.contained.note else {})}

    def driver(self) -> Driver:
        return ProcessDriver(self)

    async def take(self) -> Worker:
        """An idle process of this run, or a new one, ready for a case."""
        self._abandon(lambda loop: loop.is_closed())  # runs that ended without `aclose` (run_case alone)
        idle = self._idle.setdefault(asyncio.get_running_loop(), [])
        if idle:
            return idle.pop()
        worker = Worker(self, {**os.environ, REUSE_ENV: str(self.reuse)}, new_folder(), lines=True)
        if not self.handshake:
            return worker
        try:  # a worker says it is ready once it has imported the agent: that time is not the case's
            line = await asyncio.wait_for(worker.proc.out.line(), START_WAIT)
            if line != READY:
                raise await worker.failure() if line is None else AgentFailure(
                    "agent_crash", f"the agent's worker said {line[:200]!r}, not that it is ready")
        except asyncio.TimeoutError:
            await worker.close()
            raise AgentFailure("agent_timeout", f"the agent's worker was not ready within {START_WAIT:g} s") from None
        except BaseException:
            await worker.close()
            raise
        return worker

    def give_back(self, worker: Worker) -> None:
        self._idle.setdefault(asyncio.get_running_loop(), []).append(worker)

    def _abandon(self, which: Callable[[asyncio.AbstractEventLoop], bool]) -> None:
        for loop in [lp for lp in self._idle if which(lp)]:
            for worker in self._idle.pop(loop):
                worker.abandon()

    async def aclose(self) -> None:
        idle = self._idle.pop(asyncio.get_running_loop(), [])
        await asyncio.gather(*(w.close() for w in idle))


_AGENTS: list[ProcessAgent] = []  # held until exit, as their idle workers are


def end_idle_workers() -> None:
    """End the idle workers of every process agent whose run's event loop is over (`run_case` alone
    keeps its worker for the next case on the same loop). Called at exit; a test session calls it
    before it looks for processes its tests left behind."""
    for agent in _AGENTS:
        agent._abandon(lambda loop: loop.is_closed() or not loop.is_running())


atexit.register(end_idle_workers)
