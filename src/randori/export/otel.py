"""OpenTelemetry spans of finished cases, following the GenAI semantic conventions (Development status).

Per case: an `invoke_agent` span, with an `execute_tool` child per tool call, and `run_guardrail`
spans for what the defense decided: the guardrail's verdict (allow, deny, modify, warn) is kept apart
from the action enforced (allow, block, modify), as the proposed GenAI security conventions do; a
detector that flags an output (verdict deny) while the case goes on with the output withheld
(action modify) shows both. Guardrail spans are children of the span they protect.

One span builder (`emit_case`) serves `randori run --otel` (cases as they finish) and
`randori export --format otel-json` (a finished store). A case's steps carry no timing of their own:
child spans divide the case's measured duration in order (the `randori.timing` attribute says so).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import randori
from randori.errors import UserError
from randori.export.source import Results, Step, agent_label, as_json, flag, need, tool_steps, writable_file

RISK = "prompt_injection"
# A defense's note (`name: text`, see Defense.note) -> (target, verdict, action enforced)
_DECISIONS = (
    (re.compile(r"blocked (?P<tool>\S+): "), "tool_call", "deny", "block"),
    (re.compile(r"withheld (?P<tool>\S+) output"), "tool_result", "deny", "modify"),
    (re.compile(r"aborted on (?P<tool>\S+) output"), "tool_result", "deny", "block"),
    (re.compile(r"offered \d+ of \d+ tools|no usable tool choice"), "tool_definitions", "modify", "modify"),
    (re.compile(r"plan: |no usable plan|dropped plan step"), "plan", "modify", "modify"),
    (re.compile(r"allow: |no usable allow-list"), "tool_policy", "modify", "modify"),
)


@dataclass
class Decision:
    defense: str
    note: str
    target: str
    verdict: str
    action: str
    tool: str | None = None


def decisions(defense_spec: str, messages: list[dict[str, Any]]) -> list[tuple[int, Decision]]:
    """(message index, decision) for each note a defense of `defense_spec` left in the trace. A note
    no pattern knows is a warning that changed nothing."""
    names = set(defense_names(defense_spec))
    out = []
    for i, m in enumerate(messages):
        for note in m.get("annotations") or []:
            name, sep, text = note.partition(": ")
            if not sep or name not in names:
                continue  # the harness's own notes (a changed tool list, a step limit)
            for pattern, target, verdict, action in _DECISIONS:
                found = pattern.match(text)
                if found:
                    out.append((i, Decision(name, text, target, verdict, action, found.groupdict().get("tool"))))
                    break
            else:
                out.append((i, Decision(name, text, "agent", "warn", "allow")))
    return out


def defense_names(spec: str) -> list[str]:
    """The defenses of a spec (`tool_filter+detector[mode=abort]`), by the name their notes carry."""
    return [part.split("[")[0].strip() for part in spec.split("+")]


def case_row(result: Any) -> dict[str, Any]:
    """A finished CaseResult as the row the store would give back."""
    return {f.name: getattr(result, f.name) for f in fields(result)}


class CaseSpans:
    """Turns finished cases into spans on a tracer provider (an OTLP exporter, a file, memory)."""

    def __init__(self, provider: Any, exporter: Any = None):
        self.provider, self.exporter = provider, exporter
        self.tracer = provider.get_tracer("randori", randori.__version__)

    def __call__(self, result: Any) -> None:
        """The runner's callback: a CaseResult just stored (ends now)."""
        import time

        row = case_row(result)
        row.setdefault("created_at", time.time())
        emit_case(self.tracer, row, result.messages or [])

    def close(self) -> None:
        self.provider.shutdown()  # flushes what is batched
        lost = getattr(self.exporter, "lost", 0)
        if lost:
            print(f"randori: warning: {lost} spans not sent to {self.exporter.endpoint} (is an OTLP/HTTP collector "
                  "there?)", file=sys.stderr)


def _ns(t: float) -> int:
    return int(t * 1e9)


def _attrs(pairs: dict[str, Any]) -> dict[str, Any]:
    """OTel attribute values are str, bool, int, float or lists of them: None is left out."""
    return {k: v for k, v in pairs.items() if v is not None}


def emit_case(tracer: Any, row: dict[str, Any], messages: list[dict[str, Any]]) -> None:
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

    end = float(row["created_at"])
    start = end - float(row.get("duration_s") or 0.0)
    agent = agent_label(row)
    model = str(row["model"])
    ok = row["status"] == "ok"
    root = tracer.start_span(f"invoke_agent {agent}", kind=SpanKind.INTERNAL, start_time=_ns(start), attributes=_attrs({
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent,
        "gen_ai.provider.name": model.split("/")[0] if "/" in model else None, "gen_ai.request.model": model,
        "gen_ai.conversation.id": row["key"],
        "gen_ai.usage.input_tokens": row.get("input_tokens") or 0,
        "gen_ai.usage.output_tokens": row.get("output_tokens") or 0,
        "randori.case.key": row["key"], "randori.case.kind": row["kind"], "randori.suite": row["suite"],
        "randori.suite_version": row["suite_version"], "randori.user_task": row.get("user_task"),
        "randori.injection_task": row.get("injection_task"), "randori.attack": row.get("attack"),
        "randori.defense": row["defense"], "randori.repeat": row.get("repeat"), "randori.status": row["status"],
        "randori.utility": flag(row.get("utility")),
        "randori.attack_succeeded": flag(row.get("attack_succeeded")),
        "randori.injection_seen": flag(row.get("injection_seen")),
        "randori.defense.model_calls": row.get("defense_calls") or 0, "randori.timing": "case",
        "error.type": None if ok else row.get("error_category") or "other"}))
    if not ok:
        root.set_status(Status(StatusCode.ERROR, str(row.get("error_message") or "")))
    parent = trace.set_span_in_context(root)
    steps = tool_steps(messages)
    slot = (end - start) / max(len(steps), 1)
    tool_spans: list[tuple[Step, Any, float, float]] = []
    for i, step in enumerate(steps):
        t0, t1 = start + i * slot, start + (i + 1) * slot
        res = (step.result or {}).get("tool_result") or {}
        span = tracer.start_span(f"execute_tool {step.call['function']}", context=parent, kind=SpanKind.INTERNAL,
                                 start_time=_ns(t0), attributes=_attrs({
                                     "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": step.call["function"],
                                     "gen_ai.tool.type": "function", "gen_ai.tool.call.id": step.call.get("id") or None,
                                     "randori.injection.vectors_seen": list(res.get("vectors_seen") or []) or None,
                                     "error.type": "tool_error" if res.get("error") else None}))
        if res.get("error"):
            span.set_status(Status(StatusCode.ERROR, str(res["error"])))
        tool_spans.append((step, span, t0, t1))
    _guardrails(tracer, row, messages, tool_spans, root, start)
    for _, span, _, t1 in tool_spans:
        span.end(end_time=_ns(t1))
    root.end(end_time=_ns(end))


def _guardrails(tracer: Any, row: dict[str, Any], messages: list[dict[str, Any]],
                tool_spans: Sequence[tuple[Step, Any, float, float]], root: Any, start: float) -> None:
    """A guardrail span under the tool call it judged (or the agent span, for what it decided up front)."""
    from opentelemetry import trace

    by_answer = {id(step.result): (span, t0, t1) for step, span, t0, t1 in tool_spans if step.result is not None}
    judged: set[int] = set()
    for index, d in decisions(row["defense"], messages):
        message = messages[index]
        place = by_answer.get(id(message)) if message.get("role") == "tool" else None
        if place is None and d.tool is not None:  # stopped before its answer was recorded: the last such call
            place = next(((s, t0, t1) for step, s, t0, t1 in reversed(tool_spans)
                          if step.call["function"] == d.tool and step.result is None), None)
        span, t0, t1 = place if place is not None else (root, start, start)
        if span is not root:
            judged.add(id(span))
        _guardrail(tracer, trace.set_span_in_context(span), d, t0, t1)
    if as_json(row.get("detection")) is None:
        return
    # A detector judged every tool output that had content; those it did not flag, it allowed.
    names = defense_names(row["defense"])
    name = names[0] if len(names) == 1 else row["defense"]
    for step, span, t0, t1 in tool_spans:
        res = (step.result or {}).get("tool_result") or {}
        if id(span) not in judged and step.result is not None and not res.get("error") and res.get("content"):
            _guardrail(tracer, trace.set_span_in_context(span),
                       Decision(name, "", "tool_result", "allow", "allow", step.call["function"]), t0, t1)


def _guardrail(tracer: Any, context: Any, d: Decision, t0: float, t1: float) -> None:
    from opentelemetry.trace import SpanKind

    span = tracer.start_span(f"run_guardrail {d.target}", context=context, kind=SpanKind.INTERNAL,
                             start_time=_ns(t0), attributes=_attrs({
                                 "gen_ai.operation.name": "run_guardrail", "gen_ai.security.guardrail.name": d.defense,
                                 "gen_ai.security.target.type": d.target, "gen_ai.security.verdict.type": d.verdict,
                                 "gen_ai.security.verdict.reason": d.note or None,
                                 "gen_ai.security.action.type": d.action, "gen_ai.security.risk.category": RISK,
                                 "gen_ai.tool.name": d.tool}))
    span.end(end_time=_ns(t1))


# -- where spans go: an OTLP/HTTP endpoint or a JSON lines file -----------------------------------

class JsonLinesExporter:
    """Each finished span as one line of JSON (the SDK's own span encoding)."""

    def __init__(self, path: Path, append: bool):
        self.path, self.mode = path, "a" if append else "w"
        try:
            self.stream = open(path, self.mode, encoding="utf-8")  # noqa: SIM115 (closed in shutdown)
        except OSError as e:
            raise UserError(f"cannot write {path}: {e.strerror}") from None

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        for s in spans:
            self.stream.write(json.dumps(json.loads(s.to_json()), ensure_ascii=False) + "\n")
        self.stream.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.stream.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        self.stream.flush()
        return True


def provider(exporter: Any, batch: bool = False) -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    p = TracerProvider(resource=Resource.create({"service.name": "randori", "service.version": randori.__version__}))
    p.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    return p


def check(target: str) -> str | Path:
    """`--otel TARGET` checked before any work: the extra is installed, and TARGET is an http(s) URL
    or a file that can be written. Returns the OTLP/HTTP endpoint (/v1/traces added to a bare
    address) or the file's path."""
    from urllib.parse import urlsplit

    need("opentelemetry.sdk.trace", "otel", "--otel")
    if not re.match(r"https?://", target):
        return writable_file(target)
    need("opentelemetry.exporter.otlp.proto.http.trace_exporter", "otel", "--otel")
    parts = urlsplit(target)
    if not parts.hostname:
        raise UserError(f"--otel {target}: no host in this address (e.g. http://localhost:4318)")
    return target if parts.path.strip("/") else target.rstrip("/") + "/v1/traces"


def sink(target: str) -> CaseSpans:
    """Spans to an OTLP/HTTP endpoint (batched) or appended to a JSON lines file (a resumed run adds
    its cases)."""
    where = check(target)
    if isinstance(where, Path):
        return CaseSpans(provider(JsonLinesExporter(where, append=True)))
    exporter = _Counted(str(where))
    return CaseSpans(provider(exporter, batch=True), exporter)


class _Counted:
    """The OTLP/HTTP exporter, counting the spans it could not deliver: its own retry messages are
    silenced (they would cut through the progress bar), and one warning says what was lost."""

    def __init__(self, endpoint: str):
        import logging

        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        logging.getLogger("opentelemetry.exporter.otlp.proto.http").setLevel(logging.CRITICAL)
        self.endpoint, self.lost = endpoint, 0
        self.inner = OTLPSpanExporter(endpoint=endpoint)

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        result = self.inner.export(spans)
        if result != SpanExportResult.SUCCESS:
            self.lost += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))


def export(results: Results, out: str | Path) -> str:
    """`--format otel-json`: every case's spans as JSON lines in the file `out` (overwritten)."""
    need("opentelemetry.sdk.trace", "otel", "--format otel-json")
    path = writable_file(out)
    spans = CaseSpans(provider(JsonLinesExporter(path, append=False)))
    try:
        for row in results.rows:
            emit_case(spans.tracer, row, results.messages(row["key"]))
    finally:
        spans.close()
    return f"wrote the spans of {len(results.rows)} cases to {path}"
