"""OpenTelemetry GenAI spans: the span tree of a case, guardrail verdicts apart from the action
enforced, and both ways out (`run --otel` to a file or an OTLP endpoint, `export --format otel-json`)."""

import json
import threading
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers import randori

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from randori.export.otel import CaseSpans, emit_case, provider  # noqa: E402
from randori.export.source import open_results  # noqa: E402


def spans_of(rows_and_messages):
    memory = InMemorySpanExporter()
    sink = CaseSpans(provider(memory))
    for row, messages in rows_and_messages:
        emit_case(sink.tracer, row, messages)
    sink.close()
    return memory.get_finished_spans()


@pytest.fixture(scope="module")
def tree(two_by_two):
    with open_results(two_by_two) as results:
        rows = [(r, results.messages(r["key"])) for r in results.rows]
    return rows, spans_of(rows)


def test_one_invoke_agent_span_per_case_with_its_tool_calls_as_children(tree):
    rows, spans = tree
    by_id = {s.context.span_id: s for s in spans}
    roots = {s.attributes["gen_ai.conversation.id"]: s for s in spans if s.parent is None}
    assert len(roots) == len(rows)
    for row, messages in rows:
        root = roots[row["key"]]
        assert root.name == f"invoke_agent {row['model']}"
        assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert root.attributes["gen_ai.request.model"] == row["model"]
        assert root.attributes["gen_ai.usage.input_tokens"] == row["input_tokens"]
        assert root.attributes.get("randori.attack_succeeded") == (None if row["attack_succeeded"] is None
                                                               else bool(row["attack_succeeded"]))
        tools = [s for s in spans if s.parent is not None and s.parent.span_id == root.context.span_id
                 and s.name.startswith("execute_tool")]
        called = [c["function"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        assert [s.attributes["gen_ai.tool.name"] for s in sorted(tools, key=lambda s: s.start_time)] == called
        for s in tools:
            assert root.start_time <= s.start_time <= s.end_time <= root.end_time
    for s in spans:
        if s.parent is not None:
            assert by_id[s.parent.span_id].context.trace_id == s.context.trace_id


def test_guardrail_spans_keep_the_detectors_verdict_apart_from_what_was_enforced(tree):
    rows, spans = tree
    by_id = {s.context.span_id: s for s in spans}
    guards = [s for s in spans if s.name.startswith("run_guardrail")]
    expected = Counter()
    for row, _ in rows:
        for key, n in json.loads(row["detection"] or "{}").items():
            expected["deny" if key.endswith("flagged") else "allow"] += n
    assert expected["deny"] > 0 and expected["allow"] > 0
    assert Counter(s.attributes["gen_ai.security.verdict.type"] for s in guards) == expected
    for s in guards:
        a = s.attributes
        assert a["gen_ai.operation.name"] == "run_guardrail"
        assert a["gen_ai.security.risk.category"] == "prompt_injection"
        assert a["gen_ai.security.guardrail.name"] == "detector"
        # a flagged output was withheld and the case went on: verdict deny, action modify
        assert (a["gen_ai.security.verdict.type"], a["gen_ai.security.action.type"]) in {("deny", "modify"),
                                                                                         ("allow", "allow")}
        parent = by_id[s.parent.span_id]
        assert parent.name == f"execute_tool {a['gen_ai.tool.name']}"
        assert by_id[parent.parent.span_id].attributes["randori.defense"] == "detector"


def _case(defense, messages, **extra):
    row = {"key": "k", "kind": "attacked", "suite": "banking", "suite_version": "1", "model": "m/x",
           "defense": defense, "status": "ok", "created_at": 1000.0, "duration_s": 2.0, "utility": 0,
           "attack_succeeded": 0, "injection_seen": 1, "user_task": "u", "injection_task": "i", "attack": "a",
           "repeat": 0, **extra}
    return row, messages


def test_a_blocked_call_an_abort_and_a_tool_choice_each_have_their_place():
    messages = [
        {"role": "system", "content": "s"}, {"role": "user", "content": "pay the bill"},
        {"role": "assistant", "tool_calls": [{"function": "read", "id": "c1"}],
         "annotations": ["tool_filter: offered 2 of 9 tools: read, pay"]},
        {"role": "tool", "content": "bill", "tool_result": {"call_id": "c1", "function": "read", "content": "bill"}},
        {"role": "assistant", "tool_calls": [{"function": "pay", "id": "c2", "args": {"to": "x"}}]},
        {"role": "tool", "content": "Error: blocked", "annotations": ["policy: blocked pay: not on the allow-list"],
         "tool_result": {"call_id": "c2", "function": "pay", "error": "This call was blocked by a security policy"}},
        {"role": "assistant", "tool_calls": [{"function": "read", "id": "c3"}]},
        {"role": "assistant", "content": "", "annotations": [
            "detector: aborted on read output (fake_tag)", "aborted by defense detector: injection", "stopped"]},
    ]
    spans = spans_of([_case("tool_filter+policy+detector[mode=abort]", messages)])
    by_id = {s.context.span_id: s for s in spans}
    guards = {s.attributes["gen_ai.security.guardrail.name"]: s for s in spans if s.name.startswith("run_guardrail")}
    assert set(guards) == {"tool_filter", "policy", "detector"}  # harness notes make no guardrail span

    def place(name):
        g = guards[name]
        return (g.attributes["gen_ai.security.target.type"], g.attributes["gen_ai.security.verdict.type"],
                g.attributes["gen_ai.security.action.type"], by_id[g.parent.span_id].name)

    assert place("tool_filter") == ("tool_definitions", "modify", "modify", "invoke_agent m/x")
    assert place("policy") == ("tool_call", "deny", "block", "execute_tool pay")
    assert place("detector") == ("tool_result", "deny", "block", "execute_tool read")
    aborted = by_id[guards["detector"].parent.span_id]
    assert aborted.attributes["gen_ai.tool.call.id"] == "c3"  # the call whose output stopped the case
    pay = next(s for s in spans if s.name == "execute_tool pay")
    assert pay.status.status_code.name == "ERROR"


def test_a_note_no_pattern_knows_is_a_warning_that_changed_nothing_and_errors_mark_the_case():
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": "a", "annotations": ["sandwich: reminded the model of the task"]}]
    spans = spans_of([_case("sandwich", messages, status="error", error_category="timeout", error_message="slow")])
    [guard] = [s for s in spans if s.name.startswith("run_guardrail")]
    assert (guard.attributes["gen_ai.security.verdict.type"], guard.attributes["gen_ai.security.action.type"]) == (
        "warn", "allow")
    [root] = [s for s in spans if s.parent is None]
    assert root.status.status_code.name == "ERROR" and root.attributes["error.type"] == "timeout"


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_run_otel_to_a_file_and_export_otel_json_build_the_same_spans(tmp_path):
    results, live = tmp_path / "r", tmp_path / "live.jsonl"
    r = randori("run", "-s", "banking", "-u", "user_task_2", "-m", "scripted/gullible", "-d", "detector",
                "-r", str(results), "--otel", str(live))
    assert r.returncode == 0, r.stderr
    r = randori("export", "-f", "otel-json", "-r", str(results), "-o", str(tmp_path / "later.jsonl"))
    assert r.returncode == 0, r.stderr
    run_spans, exported = _lines(live), _lines(tmp_path / "later.jsonl")
    roots = [s for s in run_spans if s["parent_id"] is None]
    assert len(roots) == 23 and all(s["name"] == "invoke_agent scripted/gullible" for s in roots)

    def shape(spans):
        names = {s["context"]["span_id"]: s["name"] for s in spans}
        return Counter((s["name"], names.get(s["parent_id"])) for s in spans)

    assert shape(run_spans) == shape(exported)
    assert any(s["attributes"].get("gen_ai.security.verdict.type") == "deny" for s in run_spans)


class _Collector(BaseHTTPRequestHandler):
    bodies: list = []
    status = 200

    def do_POST(self):  # noqa: N802 (the http.server API)
        self.bodies.append((self.path, self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(self.status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


def run_against(handler, tmp_path, path=""):
    """A one-benign-case run (plus eleven injection tasks alone) with --otel to `handler` on loopback."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        return randori("run", "-s", "banking", "-u", "user_task_2", "--no-attack", "-m", "scripted/oracle",
                       "-r", str(tmp_path / "r"), "--otel", f"http://127.0.0.1:{server.server_address[1]}{path}")
    finally:
        server.shutdown()


def test_run_otel_sends_the_spans_to_an_otlp_endpoint(tmp_path):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    r = run_against(_Collector, tmp_path)
    assert r.returncode == 0, r.stderr
    names = defaultdict(int)
    for path, body in _Collector.bodies:
        assert path == "/v1/traces"
        request = ExportTraceServiceRequest.FromString(body)
        for rs in request.resource_spans:
            assert any(a.key == "service.name" and a.value.string_value == "randori" for a in rs.resource.attributes)
            for ss in rs.scope_spans:
                for span in ss.spans:
                    names[span.name.split(" ")[0]] += 1
    assert names["invoke_agent"] == 12  # one benign case and eleven injection tasks alone
    assert names["execute_tool"] > 0


class _Refusing(_Collector):
    bodies: list = []
    status = 400


def test_spans_a_collector_refuses_are_counted_in_one_warning(tmp_path):
    r = run_against(_Refusing, tmp_path, "/v1/traces")
    assert r.returncode == 0 and _Refusing.bodies  # the cases are stored all the same
    warnings = [line for line in r.stderr.splitlines() if "spans not sent" in line]
    assert len(warnings) == 1 and warnings[0].startswith("randori: warning: ")
