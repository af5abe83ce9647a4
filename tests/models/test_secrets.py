"""API keys never reach the store, the terminal or a report, even when a server echoes them back."""

import json

from randori.bench.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, Fault, scripted_policy
from tests.helpers import randori
from tests.models.helpers import REFUND_STEPS

KEY = "sk-randori-test-KEY-4f7c2a9e"


def test_api_key_appears_nowhere(tmp_path):
    ok = scripted_policy(REFUND_STEPS)

    def policy(req):  # one case meets a server that quotes the credentials it got in its error
        user = next(m["content"] for m in req["messages"] if m["role"] == "user")
        return ok(req) if "Brightwave" in user else Fault(status=400, echo_auth=True)

    env = {"OPENAI_API_KEY": KEY, "RANDORI_RETRY_BASE_DELAY": "0.001"}
    results = tmp_path / "results"
    with FakeOpenAIServer(policy) as server:
        r = randori("run", "-s", "banking", "-u", "user_task_1", "-u", "user_task_2", "-i", "injection_task_1",
                    "--no-attack", "-m", "openai/fake-model", "--base-url", server.base_url, "-r", str(results),
                    env=env)
    assert r.returncode == 0, r.stderr
    auth = [{k.lower(): v for k, v in h.items()}.get("authorization") for h in server.headers]
    assert auth and set(auth) == {f"Bearer {KEY}"}  # the key was really in play
    html = tmp_path / "report.html"
    outputs = [r.stdout, r.stderr]
    for args in (["-f", "json"], ["-f", "csv"], [], ["--html", str(html)]):
        rep = randori("report", "-r", str(results), *args, env=env)
        assert rep.returncode == 0, rep.stderr
        outputs += [rep.stdout, rep.stderr]
    outputs.append(html.read_text())
    with Store(results) as store:
        cases = store.cases()
        errors = [c for c in cases if c["status"] == "error"]
        assert errors and all("***" in c["error_message"] for c in errors)  # scrubbed, not lost
        outputs += [json.dumps(store.trace(c["key"])) for c in cases]
        outputs += [json.dumps(cases), json.dumps(store.runs())]
    for f in results.iterdir():  # the database, its WAL and anything else written there
        outputs.append(f.read_bytes().decode("latin-1"))
    leaks = [o for o in outputs if KEY in o]
    assert not leaks
