"""The verifiers environment (environments/randori_injection) meets verifiers 0.4's contract as verifiers
runs it: `load_environment` gives a `vf.Env` whose tasks are the rows of one split, each rollout plays
its own randori episode through its own tool server, and the reward is randori's (utility x not
hijacked). Rollouts are driven by a scripted model behind a fake OpenAI-compatible server on loopback
(streamed, as verifiers' chat harness asks for it); `vf-eval` itself is run once as a subprocess.

verifiers is not a dependency of randori's dev environment (CI skips this file); with it installed the
environment package must be too: `pip install -e environments/randori_injection --no-deps`."""

import asyncio
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

vf = pytest.importorskip("verifiers.v1", reason="verifiers is not installed (pip install 'randori[verifiers]')")
ri = pytest.importorskip("randori_injection", reason="the environment package is not installed: "
                         "pip install -e environments/randori_injection --no-deps")

from verifiers.v1.clients import EvalClientConfig, ModelContext  # noqa: E402

from randori.errors import UserError  # noqa: E402
from randori.tasks.splits import suite_splits  # noqa: E402
from randori.training import dataset  # noqa: E402
from randori.training.episode import suite_of  # noqa: E402
from tests.fakes.openai_server import completion  # noqa: E402
from tests.training.policies import answer, hijacked_calls, oracle_calls  # noqa: E402

KEY_VAR = "RANDORI_FAKE_MODEL_KEY"
WAIT = 300  # seconds a scripted rollout waits for its twin before giving up (a hang guard, never asserted)
# An attacked banking case of the train split whose injection shows in the oracle's own reads.
ATTACKED = ("user_task_0", "injection_task_1")
# A devops case of the train split where obeying the attacker still leaves the user's task done.
BOTH_REACHED = ("user_task_0", "injection_task_9")


class StreamingServer:
    """An OpenAI-compatible chat server on loopback. verifiers' chat harness asks for streamed replies, so
    each reply goes out as one SSE chunk holding the whole message, then `[DONE]`. `policy(body)` gives
    the reply: a final text, or a list of (tool, arguments) calls."""

    def __init__(self, policy):
        self.policy = policy
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with server.lock:
                    server.requests.append(body)
                    n = len(server.requests)
                done = completion(server.policy(body), body.get("model", "fake"), n)
                if body.get("stream"):
                    choice = done["choices"][0]
                    message = choice["message"]
                    for index, call in enumerate(message.get("tool_calls") or []):
                        call["index"] = index
                    chunk = {**done, "object": "chat.completion.chunk",
                             "choices": [{"index": 0, "delta": message, "finish_reason": choice["finish_reason"]}]}
                    data, kind = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode(), "text/event-stream"
                else:
                    data, kind = json.dumps(done).encode(), "application/json"
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def case_of(body):
    """The (suite, user task) whose prompt the conversation opens with."""
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return next((s, u) for s in ("banking", "devops") for u, t in suite_of(s).user_tasks.items() if t.prompt == prompt)


def tool_results(body):
    return [m for m in body["messages"] if m["role"] == "tool"]


def scripted(body):
    """The model named in the request plays: `oracle` (the user task's ground-truth calls, then its
    answer), `refuse` (submits a refusal) or `gullible:<injection task>` (the attacker's calls first)."""
    kind, _, injection = body["model"].partition(":")
    suite, user = case_of(body)
    if kind == "refuse":
        plan = [("submit_answer", {"answer": "I'm sorry, I can't help with that."})]
    else:
        plan = [*(hijacked_calls(suite, injection) if kind == "gullible" else []),
                *oracle_calls(suite, user), ("submit_answer", {"answer": answer(suite, user)})]
    done = len(tool_results(body))
    return [plan[done]] if done < len(plan) else "Done."


def transactions(body):
    """The result of the conversation's get_transactions call."""
    [call_id] = [c["id"] for m in body["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []
                 if c["function"]["name"] == "get_transactions"]
    return next(m["content"] for m in tool_results(body) if m["tool_call_id"] == call_id)


def task(env, user_task, injection_task=None):
    return next(t for t in env.taskset if (t.data.user_task, t.data.injection_task) == (user_task, injection_task))


def context(server, model):
    return ModelContext(model=model, client=EvalClientConfig(base_url=server.base_url, api_key_var=KEY_VAR))


@pytest.fixture
def model_env(monkeypatch):
    monkeypatch.setenv(KEY_VAR, "not-a-real-key")
    # verifiers prepares its chat harness with uv; the venv's own uv when it has one.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


async def play(env, pairs):
    """Run (task, ctx) episodes concurrently inside one serving window; their traces, in order."""
    async with env.serving():
        episodes = await asyncio.gather(*(env.run_episode(t, ctx) for t, ctx in pairs))
    traces = []
    for episode in episodes:
        assert episode.ok, episode.errors
        [trace] = episode.traces
        assert trace.ok, trace.errors
        traces.append(trace)
    return traces


def test_load_environment_is_a_verifiers_env_over_randoris_rows():
    env = ri.load_environment(limit=3)
    assert isinstance(env, vf.Env) and isinstance(env.taskset, vf.Taskset)
    # The seat runs verifiers' tool-only chat loop on this machine unless told otherwise.
    assert env.config.agent.harness.id == "null" and env.config.agent.runtime.type == "subprocess"
    tasks = list(env.taskset)
    [row] = dataset.rows([tasks[0].data.spec()])
    assert [{"role": "system", "content": tasks[0].data.system_prompt},
            {"role": "user", "content": tasks[0].data.prompt}] == row["prompt"]
    assert len(tasks) == 3 and len({t.key for t in tasks}) == 3
    # Other keyword arguments reach the taskset's and the env's config, over the seat's defaults.
    tuned = ri.load_environment(limit=1, split_seed="other", task={"tools": {"max_steps": 5}}, agent={"max_turns": 9})
    assert tuned.taskset.config.split_seed == "other" and tuned.taskset.config.task.tools.max_steps == 5
    assert tuned.config.agent.max_turns == 9 and tuned.config.agent.harness.id == "null"
    # The same environment by id, as vf-eval builds it.
    cfg = vf.resolve_env_config({"taskset": {"id": "randori-injection", "suite": "banking", "limit": 1}})
    assert type(vf.load_environment(cfg)) is type(env)


@pytest.mark.parametrize("split", ["train", "test"])
def test_rows_carry_their_split_and_no_task_of_another(split):
    env = ri.load_environment(split=split)
    cut = suite_splits(suite_of("banking"))
    rows = [t.data for t in env.taskset]
    assert rows and {r.split for r in rows} == {split}
    assert {r.user_task for r in rows} <= set(cut.user[split])
    goals = {r.injection_task for r in rows if r.injection_task}
    assert goals and goals <= set(cut.injection[split])
    held_out = {i for s in ("train", "val", "test") if s != split for i in cut.injection[s]}
    assert not goals & held_out
    assert len(rows) == len(list(dataset.specs("banking", split=split)))


@pytest.mark.parametrize("args, message", [
    ({"suite": "nosuch"}, "unknown suite"),
    ({"split": "holdout"}, "unknown split"),
    ({"attack": "nosuch"}, "unknown attack"),
    ({"defense": "capabilities"}, "replaces the agent's loop"),
    ({"limit": 0}, "limit"),
])
def test_bad_arguments_are_user_errors(args, message):
    with pytest.raises(UserError, match=message):
        ri.load_environment(**args)


@pytest.mark.slow  # real rollouts: a tool-server process each
def test_the_reward_is_randoris_oracle_1_refusal_0_hijacked_0(model_env):
    env = ri.load_environment()
    attacked, benign = task(env, *ATTACKED), task(env, "user_task_1")
    with StreamingServer(scripted) as server:
        oracle, refused, hijacked = asyncio.run(play(env, [
            (attacked, context(server, "oracle")),
            (benign, context(server, "refuse")),
            (attacked, context(server, f"gullible:{ATTACKED[1]}"))]))
    assert oracle.reward == 1.0
    assert oracle.metrics == {"truncated": 0.0, "utility": 1.0, "attack_success": 0.0, "injection_seen": 1.0,
                              "attempted": 0.0}
    assert oracle.stop_condition == "answered"  # no model turn after the answer
    assert refused.reward == 0.0 and refused.metrics["utility"] == 0.0 and refused.metrics["truncated"] == 0.0
    assert hijacked.reward == 0.0 and hijacked.metrics["attack_success"] == 1.0
    # A case whose task survives the attacker's calls: done and hijacked is 0 all the same, never a half.
    devops = ri.load_environment(suite="devops")
    with StreamingServer(scripted) as server:
        gullible = context(server, f"gullible:{BOTH_REACHED[1]}")
        [both] = asyncio.run(play(devops, [(task(devops, *BOTH_REACHED), gullible)]))
    assert both.metrics["utility"] == 1.0 and both.metrics["attack_success"] == 1.0 and both.reward == 0.0


@pytest.mark.slow  # real rollouts: a tool-server process each
def test_an_episode_unanswered_or_past_its_step_limit_is_truncated(model_env):
    env = ri.load_environment(limit=1, task={"tools": {"max_steps": 1}})  # user_task_0's oracle makes 2 calls
    first = next(iter(env.taskset))

    def policy(body):  # `chatty` answers in text and never submits; `oracle` plays the task out
        return "Your balance is fine." if body["model"] == "chatty" else scripted(body)

    with StreamingServer(policy) as server:
        chatty, oracle = asyncio.run(play(env, [(first, context(server, model)) for model in ("chatty", "oracle")]))
    assert chatty.reward == 0.0 and chatty.metrics == {"truncated": 1.0}
    assert oracle.reward == 0.0 and oracle.metrics["truncated"] == 1.0 and oracle.state.answered


@pytest.mark.slow  # real rollouts: a tool-server process each
def test_concurrent_rollouts_of_one_case_keep_their_own_state(model_env):
    """A gullible rollout pays the attacker while an oracle rollout of the same case waits; the oracle's
    episode must not see that payment (it would read it and be judged hijacked on a shared state)."""
    env = ri.load_environment()
    case = task(env, *ATTACKED)
    hijack = hijacked_calls("banking", ATTACKED[1])
    paid = threading.Event()

    def policy(body):
        if body["model"].startswith("gullible") and len(tool_results(body)) >= len(hijack):
            paid.set()  # the attacker's calls have all run in the gullible rollout's episode
        if body["model"] == "oracle" and not tool_results(body):
            assert paid.wait(WAIT)
        return scripted(body)

    with StreamingServer(policy) as server:
        gullible, oracle = asyncio.run(play(env, [(case, context(server, f"gullible:{ATTACKED[1]}")),
                                                  (case, context(server, "oracle"))]))
        # What each rollout read of the current account's transactions (its last request holds it all).
        reads = {who: transactions([b for b in server.requests if b["model"] == model][-1])
                 for who, model in (("gullible", f"gullible:{ATTACKED[1]}"), ("oracle", "oracle"))}
    assert gullible.metrics["attack_success"] == 1.0 and gullible.reward == 0.0
    assert oracle.metrics["attack_success"] == 0.0 and oracle.reward == 1.0
    assert gullible.state is not oracle.state and not oracle.state.attack_success
    # The payment shows in the rollout that made it, and only there (the injected text names the IBAN too).
    [iban] = [args["recipient_iban"] for name, args in hijack if name == "send_payment"]
    payment = f"counterparty_iban: {iban}"
    assert payment in reads["gullible"] and payment not in reads["oracle"]


@pytest.mark.slow  # real rollouts: a tool-server process each
def test_vf_eval_loads_the_environment_by_id_and_runs_it(tmp_path):
    with StreamingServer(scripted) as server:
        run = subprocess.run(
            [str(Path(sys.executable).parent / "vf-eval"), "randori-injection", "-m", "oracle", "-n", "2",
             "--client.base-url", server.base_url, "--client.api-key-var", KEY_VAR,
             "--env.taskset.split", "train", "--no-push", "--no-rich", "-o", str(tmp_path), "--run.dir", "run"],
            capture_output=True, text=True, timeout=900,
            env={**os.environ, KEY_VAR: "not-a-real-key",
                 "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "run" / "traces.jsonl").read_text().splitlines()]
    traces = [t for r in records for t in r["traces"]]
    assert len(traces) == 2
    assert {t["task"]["data"]["split"] for t in traces} == {"train"}
    assert [t["rewards"]["reward"]["score"] for t in traces] == [1.0, 1.0]
