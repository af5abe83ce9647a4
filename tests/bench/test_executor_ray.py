"""`--executor ray`: on a real Ray cluster on loopback (one per module: it takes seconds to start),
the same store as in process, case by case, also when a worker is killed mid-run; workers keep the
driver's priority and hold one provider limit between them."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from randori.agents.models import ModelSettings, get_model
from randori.bench.runner import Selection, plan, run_cases
from randori.bench.store import Store
from randori.suites import ready_suite, suite_names
from tests.bench.executor_support import CountingServer, outcomes, run_all
from tests.fakes.policies import ground_truth_policy
from tests.fakes.ray_cluster import RayCluster, auth_env
from tests.helpers import randori

AUTH = auth_env()
os.environ.update(AUTH)  # before Ray is imported: it reads its token once per process
ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    with RayCluster(AUTH, cpus=2) as c:
        ray.init(address=c.address, _node_ip_address="127.0.0.1", log_to_driver=False, configure_logging=False)
        try:
            yield c
        finally:
            ray.shutdown()


def test_a_ray_cluster_stores_exactly_the_in_process_cases(cluster, reference, tmp_path):
    run_all(tmp_path, "--executor", f"ray={cluster.address}", env=cluster.env)
    assert outcomes(tmp_path) == reference


def test_a_ray_worker_killed_mid_run_changes_nothing_and_workers_keep_the_drivers_priority(
        cluster, reference, tmp_path):
    from randori.bench.executors.ray import Ray

    suites = [ready_suite(n) for n in suite_names()]
    model = get_model("scripted/gullible", ModelSettings())
    cases = plan(Selection(suites=suites, model=model))
    executor = Ray()  # this process is connected to the cluster: the executor uses that connection
    killed: list[int] = []
    seen: list[object] = []

    def on_result(res):
        seen.append(res)
        if not killed and len(seen) >= 300 and executor.worker_pids():
            killed.append(executor.worker_pids()[0])
            os.kill(killed[0], signal.SIGKILL)  # the cluster runs on this machine

    with Store(tmp_path) as store:
        run_id = store.start_run({})
        asyncio.run(run_cases(cases, {s.name: s for s in suites}, model, store, run_id, on_result=on_result,
                              executor=executor))
        store.finish_run(run_id)
    assert killed and executor.lost_cases > 0
    assert outcomes(tmp_path) == reference
    assert executor.niceness and set(executor.niceness.values()) == {os.nice(0)}


def test_ray_workers_share_one_limit_of_requests_in_flight(cluster, tmp_path):
    with CountingServer(ground_truth_policy(["banking"]), latency=0.05) as server:
        r = randori("run", "-s", "banking", "-m", "openai/fake", "--base-url", server.base_url, "--no-adaptive",
                    "--provider-concurrency", "3", "--concurrency", "48", "--executor", f"ray={cluster.address}",
                    "-u", "user_task_0", "-u", "user_task_1", "-u", "user_task_2", "--results", str(tmp_path),
                    env={**cluster.env, "OPENAI_API_KEY": "sk-fake-ray-shared"}, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
    assert server.most == 3  # reached, never exceeded, by the two workers together
