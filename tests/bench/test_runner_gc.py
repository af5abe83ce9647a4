"""A run keeps the cyclic garbage collector quiet and leaves it as it found it."""

import asyncio
import gc

from randori.agents.models import ModelSettings, get_model
from randori.bench.runner import Selection, plan, quiet_gc, run_cases
from randori.bench.store import Store
from randori.suites.banking import suite as banking


def test_quiet_gc_raises_the_threshold_freezes_the_heap_and_restores_both():
    before = gc.get_threshold()
    with quiet_gc(young=50_000):
        assert gc.get_threshold()[0] == 50_000 and gc.get_threshold()[1:] == before[1:]
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_run_restores_the_collector_even_when_it_fails(tmp_path):
    model = get_model("scripted/oracle", ModelSettings())
    cases = plan(Selection(suites=[banking], model=model, attacks=[], injection_only=False))[:3]
    before = gc.get_threshold()
    seen = []

    def on_result(res):
        seen.append(gc.get_threshold()[0])
        raise RuntimeError("the progress display broke")

    with Store(tmp_path) as store:
        run_id = store.start_run({})
        try:
            asyncio.run(run_cases(cases, {"banking": banking}, model, store, run_id, on_result=on_result))
        except RuntimeError:
            pass
    assert seen and seen[0] >= 20_000
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
