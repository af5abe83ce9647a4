"""`randori run`'s options as one typed request, and the checks that turn it into a run's setup: each
mistake is one line, and the options are checked in one order (the cheap ones before any suite or
model is loaded)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from randori.cli.common import (
    DEFAULT_MODEL,
    DEFAULT_RESULTS,
    MAX_BUDGET,
    MAX_REPEATS,
    MAX_RETRIES,
    MAX_TEMPERATURE,
    MAX_TIMEOUT,
    MAX_TOOL_CALLS_CAP,
    RESULTS_HELP,
    _check_base_url,
    _choice,
    _number_in,
    _results_dir,
    _use_prices,
    warn,
)
from randori.errors import UserError

# `run --help` groups its options in these panels.
WHAT = "What to run"
MODEL = "Model settings"
ATTACKS = "Attacks and defenses"
LIMITS = "Limits and spend"
OUTPUT = "Output"


@dataclass(frozen=True)
class RunRequest:
    """Every option of `randori run`, as given (the order of the fields is the order of `--help`)."""

    suite: Annotated[list[str], typer.Option(
        "--suite", "-s", metavar="SUITE", help="Suite to run (repeatable). Default: all.",
        rich_help_panel=WHAT)] = field(default_factory=list)
    model: Annotated[list[str], typer.Option(
        "--model", "-m", metavar="MODEL", help="provider/model, e.g. openai/gpt-4o-mini or scripted/oracle "
        f"(repeatable: each model its own cases and rows). Default: $RANDORI_MODEL, else {DEFAULT_MODEL}.",
        rich_help_panel=MODEL)] = field(default_factory=list)
    base_url: Annotated[list[str], typer.Option(
        "--base-url", help="Endpoint of an OpenAI-compatible server. Repeatable: the same model served at "
        "several addresses; each request goes to the least loaded, a failing one is left out for a while.",
        rich_help_panel=MODEL)] = field(default_factory=list)
    attack: Annotated[list[str], typer.Option(
        "--attack", "-a", help="Attack (repeatable), NAME or NAME\\[key=value,...]; see `randori attacks list`. "
        "With 2+ attacks the report adds a 'max' row.",
        rich_help_panel=ATTACKS)] = field(default_factory=lambda: ["important_instructions"])
    defense: Annotated[list[str], typer.Option(
        "--defense", "-d", help="Defense (repeatable: one report row each). A+B stacks defenses; "
        "NAME\\[key=value] sets parameters; see `randori defenses list`.",
        rich_help_panel=ATTACKS)] = field(default_factory=lambda: ["none"])
    attacker_model: Annotated[str | None, typer.Option(
        help="Attacker model of --attack adaptive (provider/model). Default: scripted/attacker for "
        "scripted agents, else the agent's own model.", rich_help_panel=ATTACKS)] = None
    attacker_budget: Annotated[int | None, typer.Option(
        min=1, max=MAX_BUDGET, help="Agent runs per case for --attack adaptive (default 10) and search (default 20).",
        rich_help_panel=ATTACKS)] = None
    attacker_sees_trace: Annotated[bool, typer.Option(
        "--attacker-sees-trace", help="The adaptive attacker also sees each try's tool calls and outputs.",
        rich_help_panel=ATTACKS)] = False
    attacker_base_url: Annotated[str | None, typer.Option(
        help="Endpoint of an OpenAI-compatible server for the attacker model.", rich_help_panel=ATTACKS)] = None
    user_task: Annotated[list[str], typer.Option(
        "--user-task", "-u", help="Only these user tasks (repeatable).", rich_help_panel=WHAT)] = field(
        default_factory=list)
    injection_task: Annotated[list[str], typer.Option(
        "--injection-task", "-i", help="Only these injection tasks (repeatable).", rich_help_panel=WHAT)] = field(
        default_factory=list)
    split: Annotated[str | None, typer.Option(
        "--split", metavar="SPLIT", help="Only the cases of this split of each suite: train, val or test. A case "
        "is in a split when its user task and its injection task are (see `randori suites splits SUITE`).",
        rich_help_panel=WHAT)] = None
    split_seed: Annotated[str | None, typer.Option(
        "--split-seed", metavar="SEED", help="Seed the splits are cut with (a text; default: randori's fixed "
        "one, so every machine cuts the same splits). Only with --split.", rich_help_panel=WHAT)] = None
    data_directed: Annotated[bool, typer.Option(
        "--data-directed", help="Only the user tasks that need their data (the user leaves a step or a value to "
        "what a mail, letter or file says): where fidelity, and what a defense costs, show.",
        rich_help_panel=WHAT)] = False
    scenarios: Annotated[bool, typer.Option(
        "--scenarios", help="Run the suites' scenarios (several sessions on one environment, memory carrying "
        "over) instead of single-session cases: each without attack, and attacked ones under each attack.",
        rich_help_panel=WHAT)] = False
    scenario: Annotated[list[str], typer.Option(
        "--scenario", help="Only these scenarios (repeatable; implies --scenarios).", rich_help_panel=WHAT)] = field(
        default_factory=list)
    discriminative: Annotated[int | None, typer.Option(
        "--discriminative", metavar="K", min=1, max=MAX_REPEATS, help="Keep only the task pairs the undefended "
        "agent is hijacked in at least once in K repeats (run first, with defense none, and stored): the "
        "attacked cases that tell defenses apart. The kept pairs are stored with the run.",
        rich_help_panel=WHAT)] = None
    benign: Annotated[bool, typer.Option(
        "--benign/--no-benign", help="Also run user tasks with no attack.", rich_help_panel=WHAT)] = True
    no_attack: Annotated[bool, typer.Option(
        "--no-attack", help="Run no attacked cases at all.", rich_help_panel=WHAT)] = False
    repeats: Annotated[int, typer.Option(
        min=1, max=MAX_REPEATS, help="Run every case this many times.", rich_help_panel=WHAT)] = 1
    concurrency: Annotated[int, typer.Option(
        min=1, help="Cases in flight at once (over all workers).", rich_help_panel=LIMITS)] = 8
    executor: Annotated[str, typer.Option(
        "--executor", metavar="EXECUTOR", help="Where cases run: inprocess, processes\\[=N] (N worker processes, "
        "default one per core) or ray\\[=ADDRESS] (a local Ray cluster, or an existing one; needs randori\\[ray]). "
        "See docs/guides/cluster.md.", rich_help_panel=LIMITS)] = "inprocess"
    limit: Annotated[int | None, typer.Option(
        "--limit", min=1, metavar="N", help="Run at most N of the cases not yet in the store (whole task pairs "
        "first, in seeded order); rerun to continue.", rich_help_panel=LIMITS)] = None
    sample: Annotated[float | None, typer.Option(
        "--sample", metavar="FRACTION", help="Run a FRACTION (0-1] of the plan, stratified by suite and user task "
        "and seeded; a larger fraction or a full run later reuses every case already stored.",
        callback=_number_in("--sample", 1e-9, 1.0), rich_help_panel=LIMITS)] = None
    sample_seed: Annotated[int, typer.Option(
        "--sample-seed", metavar="SEED", help="Seed of --sample and --limit.", rich_help_panel=LIMITS)] = 0
    max_cost: Annotated[float | None, typer.Option(
        "--max-cost", metavar="USD", help="Stop cleanly before this run spends more than USD (at the price "
        "table's prices); rerun to continue.", callback=_number_in("--max-cost", 0.0, 1e9, " of dollars"),
        rich_help_panel=LIMITS)] = None
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the plan and its estimated tokens and cost; run nothing.",
        rich_help_panel=LIMITS)] = False
    temperature: Annotated[str, typer.Option(
        help="Sampling temperature, sent as given; 'none' sends none (for models that reject the parameter).",
        rich_help_panel=MODEL)] = "0.0"
    seed: Annotated[int | None, typer.Option(help="Sampling seed, sent as given.", rich_help_panel=MODEL)] = None
    max_tokens: Annotated[int | None, typer.Option(
        min=1, help="Max output tokens per model call.", rich_help_panel=MODEL)] = None
    reasoning_effort: Annotated[str | None, typer.Option(
        help="Reasoning effort (e.g. low, medium, high), sent as given to providers that take it.",
        rich_help_panel=MODEL)] = None
    max_steps: Annotated[int, typer.Option(
        min=1, help="Model turns per case before the agent is stopped.", rich_help_panel=MODEL)] = 20
    max_tool_calls: Annotated[int | None, typer.Option(
        "--max-tool-calls", min=1, max=MAX_TOOL_CALLS_CAP, help="Tool calls the built-in agent runs from one "
        "model reply; the rest are answered with an error the model sees. Default: 32.",
        rich_help_panel=LIMITS)] = None
    timeout: Annotated[float, typer.Option(
        help="Seconds one model request may take.", callback=_number_in("--timeout", 0.001, MAX_TIMEOUT, " of seconds"),
        rich_help_panel=MODEL)] = 120.0
    max_retries: Annotated[int, typer.Option(
        min=0, max=MAX_RETRIES, help="Retries of a request after a rate limit, server error, timeout or dropped "
        "connection (exponential backoff with jitter; Retry-After is obeyed).", rich_help_panel=MODEL)] = 4
    provider_concurrency: Annotated[int | None, typer.Option(
        min=1, help="Most requests in flight at once per server. Default: the provider's own "
        "(see `randori models`).", rich_help_panel=MODEL)] = None
    adaptive: Annotated[bool, typer.Option(
        "--adaptive/--no-adaptive", help="Adapt the requests in flight to rate limits and overload "
        "(halve on HTTP 429/529, grow back on success; pace by rate-limit headers), up to "
        "--provider-concurrency. --no-adaptive keeps that number fixed.", rich_help_panel=MODEL)] = True
    prices: Annotated[Path | None, typer.Option(
        "--prices", dir_okay=False, help="TOML price table overriding the built-in one (see docs).",
        rich_help_panel=OUTPUT)] = None
    agent: Annotated[str, typer.Option(
        "--agent", help="The agent under test: builtin (driven by --model), MODULE:CALLABLE or a "
        "randori.agents entry point (a Python agent), or \"mcp:COMMAND ARGS...\" (a process that uses the "
        "case's tools over MCP). See docs/guides/your-own-agent.md.", rich_help_panel=WHAT)] = "builtin"
    agent_version: Annotated[str | None, typer.Option(
        help="Version of an external agent, part of every case key and report row.", rich_help_panel=WHAT)] = None
    agent_timeout: Annotated[float, typer.Option(
        help="Seconds one case of an external agent may take (wall clock).",
        callback=_number_in("--agent-timeout", 0.001, MAX_TIMEOUT, " of seconds"), rich_help_panel=LIMITS)] = 600.0
    agent_in_process: Annotated[bool, typer.Option(
        "--agent-in-process", help="Run a Python agent in randori's own process (for debugging): its results "
        "are marked as judged in reach of the agent.", rich_help_panel=WHAT)] = False
    agent_reuse: Annotated[int | None, typer.Option(
        "--agent-reuse", min=1, help="Cases one agent process serves in turn, a fresh MCP session each (the "
        "process must read cases on stdin; see docs/guides/your-own-agent.md). Default: 1 for an MCP agent, "
        "100 for a Python agent's worker.", rich_help_panel=WHAT)] = None
    agent_network: Annotated[str, typer.Option(
        "--agent-network", help="open (the agent reaches its provider) or none (loopback only: the case's "
        "MCP server).", rich_help_panel=WHAT)] = "open"
    agent_bind: Annotated[list[str], typer.Option(
        "--agent-bind", help="A folder or file an external agent may read besides its own installation and "
        "the current folder; PATH:rw to let it write there too (repeatable).",
        rich_help_panel=WHAT)] = field(default_factory=list)
    results: Annotated[str, typer.Option(
        "--results", "-r", help=RESULTS_HELP, rich_help_panel=OUTPUT)] = DEFAULT_RESULTS
    otel: Annotated[str | None, typer.Option(
        "--otel", metavar="TARGET", help="Also emit each finished case as OpenTelemetry GenAI spans: to an "
        "OTLP/HTTP endpoint (http://HOST:4318) or appended to a JSON lines FILE. Needs randori\\[otel].",
        rich_help_panel=OUTPUT)] = None

    @property
    def attacks(self) -> list[str]:
        return [] if self.no_attack else self.attack

    @property
    def subset_note(self) -> str:
        notes = [f"split {self.split}" + (f", seed {self.split_seed}" if self.split_seed else "")] if self.split else []
        if self.sample is not None:
            notes.append(f"a {self.sample:g} sample, seed {self.sample_seed}")
        return f" ({'; '.join(notes)})" if notes else ""

    @property
    def attacker_url(self) -> str | None:
        # The default attacker is the agent's own model, so it is served where the agent is.
        return self.attacker_base_url or (self.base_url[0] if self.base_url and self.attacker_model is None else None)

    def check(self) -> RunSetup:
        """Check every option that can be checked before suites and models load, in this order, and
        build what the run needs from them. Raises UserError (one line) at the first mistake."""
        from rich.console import Console

        from randori.agents.external import get_agent
        from randori.agents.external.container import NETWORKS
        from randori.agents.models import ModelSettings
        from randori.bench.executors import get_executor

        results_dir = _results_dir(self.results)
        if self.split is not None:
            from randori.tasks.splits import check_split

            check_split(self.split)
        elif self.split_seed is not None:
            raise UserError("--split-seed cuts the splits of --split: give --split train, val or test with it")
        first_executor = get_executor(self.executor)  # a bad --executor is one line now, before any planning
        _choice(self.agent_network, NETWORKS, "--agent-network")
        for path in self.agent_bind:
            if not os.path.exists(path.removesuffix(":rw")):
                raise UserError(f"--agent-bind {path}: no such file or folder")
        agent_spec = get_agent(self.agent, self.agent_version, self.agent_timeout, in_process=self.agent_in_process,
                               reuse=self.agent_reuse, network=self.agent_network, binds=self.agent_bind,
                               hidden=[str(results_dir)])
        if self.max_tool_calls is not None:
            if agent_spec.external:
                raise UserError(f"--max-tool-calls caps the built-in agent; --agent {agent_spec.name} runs its "
                                "own loop")
            agent_spec = agent_spec.capped(self.max_tool_calls)
        if agent_spec.isolation().get("agent_isolation_note"):
            warn(f"the agent's container: {agent_spec.isolation()['agent_isolation_note']}")
        for url in self.base_url:
            _check_base_url("--base-url", url)
        _check_base_url("--attacker-base-url", self.attacker_base_url)
        settings = ModelSettings(temperature=_temperature(self.temperature), seed=self.seed,
                                 max_tokens=self.max_tokens, reasoning_effort=self.reasoning_effort)
        _use_prices(self.prices)
        if self.otel:
            from randori.export.otel import check as check_otel

            check_otel(self.otel)
        console = Console(stderr=True)
        model_names = self._model_names(agent_spec, console)
        if self.max_cost is not None:
            from randori.cli.plan import check_prices

            # An external agent's cases are priced under its own name (its reported tokens and its defense's).
            check_prices([agent_spec.label] if agent_spec.external else [m for m in model_names if m], "--max-cost")
        return RunSetup(self, results_dir, first_executor, agent_spec, settings, model_names, console)

    def _model_names(self, agent_spec: Any, console: Any) -> list[str]:
        """The models of the run, each its own batch of cases ("" for none: an external agent whose
        defenses ask no model)."""
        names = list(dict.fromkeys(self.model)) or [os.environ.get("RANDORI_MODEL") or ""]
        if agent_spec.external:
            if len(names) > 1:
                raise UserError(f"--agent {agent_spec.name} is the agent under test: give at most one --model (it "
                                "serves the defenses that ask a model)")
            return [_defense_model(self.model[0] if self.model else None, names[0] or None, self.defense,
                                   agent_spec.name) or ""]
        if not names[0]:
            console.print(f"No --model given and RANDORI_MODEL unset: using {DEFAULT_MODEL} "
                          "(a scripted agent that obeys every injection; no API key needed).")
            return [DEFAULT_MODEL]
        return names


@dataclass
class RunSetup:
    """A checked request and what was built from it: the results directory, the first model's executor
    (already chosen, warmed later), the agent under test, the model settings and the models' names."""

    request: RunRequest
    results_dir: Path
    first_executor: Any
    agent: Any
    settings: Any
    model_names: list[str]
    console: Any
    # --discriminative: the screening's repeats and the pairs it kept, per model (stored with the run).
    subset: dict[str, Any] | None = None

    @property
    def named_models(self) -> list[str]:
        return [m for m in self.model_names if m]

    @property
    def compare_by(self) -> str | None:
        """What `randori compare` should compare next: the dimension this run varied."""
        return "defense" if len(set(self.request.defense)) > 1 else "model" if len(self.model_names) > 1 else None


def _defense_model(given: str | None, model_name: str | None, defenses: list[str], agent: str) -> str | None:
    """With an external agent, --model serves only defenses that ask a model before the agent starts
    (policy); it is loaded only for them."""
    from randori.agents.defenses import get_defense
    from randori.agents.external import asks_model

    if any(asks_model(get_defense(d)) for d in defenses):
        return model_name
    if given:
        warn(f"--model {given} is not used: the agent under test is {agent}, and no defense of this run asks a model")
    return None


def _temperature(text: str) -> float | None:
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= MAX_TEMPERATURE):
        raise UserError(f"--temperature must be a number from 0 to {MAX_TEMPERATURE:g}, or 'none', not '{text}'")
    return value
