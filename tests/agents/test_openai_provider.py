import asyncio
import json

from randori.agents.models import ModelSettings, get_model
from randori.bench.runner import Selection, plan, run_case
from randori.suites.banking import suite as banking
from tests.fakes.openai_server import FakeOpenAIServer, scripted_policy
from tests.helpers import randori

REFUND_STEPS = [[("search_transactions", {"query": "Brightwave"})], "They refunded 129.00 EUR."]


def run_one(server, user_task="user_task_1", settings=None, attacks=()):
    model = get_model("openai/fake-model", settings or ModelSettings(temperature=0.0, seed=7),
                      base_url=server.base_url)
    [case] = [c for c in plan(Selection(suites=[banking], model=model, attacks=list(attacks),
                                        user_tasks=[user_task], injection_only=False))]

    async def go():
        try:
            return await run_case(case, banking, model)
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_native_tool_calls_and_exact_settings_over_http():
    with FakeOpenAIServer(scripted_policy(REFUND_STEPS)) as server:
        res = run_one(server)
    assert res.status == "ok" and res.utility is True
    first, second = server.requests
    assert first["model"] == "fake-model"
    assert first["temperature"] == 0.0 and first["seed"] == 7  # 0.0 is sent, not dropped
    assert "max_tokens" not in first
    names = {t["function"]["name"] for t in first["tools"]}
    assert {"send_payment", "get_accounts"} <= names
    params = next(t for t in first["tools"] if t["function"]["name"] == "send_payment")["function"]["parameters"]
    assert set(params["required"]) == {"from_account", "recipient_name", "recipient_iban", "amount", "subject"}
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assistant, tool = second["messages"][2], second["messages"][3]
    assert assistant["tool_calls"][0]["function"] == {"name": "search_transactions",
                                                       "arguments": json.dumps({"query": "Brightwave"})}
    assert tool["role"] == "tool" and tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert "Brightwave Electronics" in tool["content"]
    assert res.model_calls == 2 and res.input_tokens == 101 + 102 and res.output_tokens == 20


def test_unset_settings_are_not_sent():
    with FakeOpenAIServer(scripted_policy(REFUND_STEPS)) as server:
        run_one(server, settings=ModelSettings(temperature=None, max_tokens=64))
    first = server.requests[0]
    assert "temperature" not in first and "seed" not in first and first["max_tokens"] == 64


def test_malformed_arguments_and_unknown_tools_become_recoverable_tool_errors():
    steps = [[("search_transactions", "{not json")], [("teleport", {})], *REFUND_STEPS]
    with FakeOpenAIServer(scripted_policy(steps)) as server:
        res = run_one(server)
    assert res.status == "ok" and res.utility is True
    tool_msgs = [m for m in res.messages if m["role"] == "tool"]
    assert "invalid JSON" in tool_msgs[0]["tool_result"]["error"]
    assert tool_msgs[1]["tool_result"]["error"].startswith("Unknown tool 'teleport'")


def test_cli_run_through_fake_server(tmp_path):
    with FakeOpenAIServer(scripted_policy(REFUND_STEPS)) as server:
        r = randori("run", "-s", "banking", "-u", "user_task_1", "-m", "openai/fake-model", "--base-url",
                    server.base_url, "--no-attack", "--results", str(tmp_path))
        assert r.returncode == 0, r.stderr
        rows = json.loads(randori("report", "-r", str(tmp_path), "-f", "json").stdout)["rows"]
    [row] = rows
    assert row["model"] == "openai/fake-model" and row["benign_utility"]["rate"] == 1.0
    assert row["errors"] == 0


def test_temperature_none_from_the_cli_sends_no_temperature(tmp_path):
    with FakeOpenAIServer(scripted_policy(REFUND_STEPS)) as server:
        r = randori("run", "-s", "banking", "-u", "user_task_1", "-m", "openai/fake-model", "--base-url",
                    server.base_url, "--no-attack", "--temperature", "none", "--results", str(tmp_path))
        assert r.returncode == 0, r.stderr
    assert server.requests and all("temperature" not in req for req in server.requests)
    bad = randori("run", "-s", "banking", "--temperature", "warm", "--results", str(tmp_path))
    assert bad.returncode == 2 and "--temperature must be a number from 0 to 2, or 'none'" in bad.stderr


def test_unknown_model_stops_the_run_at_once(tmp_path):
    from tests.fakes.openai_server import Fault

    with FakeOpenAIServer(lambda req: Fault(status=404)) as server:
        r = randori("run", "-s", "banking", "-m", "openai/no-such-model", "--base-url", server.base_url,
                    "--results", str(tmp_path))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "not found (HTTP 404)" in r.stderr and "check the model name and --base-url" in r.stderr
    # One request per case in flight at most, not one per planned case: the run stopped.
    assert len(server.requests) <= 8


def test_the_encoded_body_is_the_json_the_sdk_would_send():
    from randori.agents.models.openai import WireCache, to_openai_messages
    from randori.suites.workspace import suite as workspace
    from randori.vocabulary import Message, ToolCall, ToolResult

    call = ToolCall(id="c1", function="search_transactions", args={"query": "Café «Zoë» \u2028 😀"})
    msgs = [Message.system("Be careful."), Message.user("Refund? \"quoted\" \\ back"),
            Message.assistant("", [call]),
            Message.tool(ToolResult(call_id="c1", function="search_transactions", content="- amount: 1.5\n  ok")),
            Message.assistant("Done.")]
    params = {"temperature": 0.0, "seed": 7, "max_tokens": 64}
    wire = WireCache()
    for tools in (banking.tools, workspace.tools, banking.tools[:3], []):
        body = wire.body({"model": "m"}, msgs, tools, params)
        expected = {"model": "m", "messages": to_openai_messages(msgs), **params}
        if tools:
            expected["tools"] = [t.schema() for t in tools]
        assert json.loads(body) == expected
        assert list(json.loads(body)) == list(expected)  # same key order
    assert len(wire.tools) == 3  # one entry per distinct tool list, reused on every request
    assert wire.body({"model": "m"}, msgs, banking.tools, {}) == wire.body({"model": "m"}, msgs, banking.tools, {})
    assert json.loads(wire.body({"model": "m"}, msgs[:2], [], {})) == {"model": "m",
                                                                       "messages": to_openai_messages(msgs[:2])}


def test_the_body_arrives_as_json():
    with FakeOpenAIServer(scripted_policy(REFUND_STEPS)) as server:
        run_one(server)
    assert all(h.get("Content-Type", h.get("content-type")) == "application/json" for h in server.headers)


def test_the_message_table_stays_within_its_byte_budget():
    from randori.agents.models.openai import WireCache
    from randori.vocabulary import Message

    wire = WireCache()
    wire.MESSAGE_BYTES = 10_000
    for i in range(200):
        msgs = [Message.system("Be careful."), Message.user(f"question {i} " + "x" * 500)]
        sent = json.loads(wire.body({"model": "m"}, msgs, [], {}))["messages"]
        assert sent[1]["content"].startswith(f"question {i} ")
        assert wire.message_bytes <= 10_000
    assert 0 < len(wire.messages) < 25
