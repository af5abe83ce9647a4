"""Stores for the report and viewer tests: one made by real scripted runs, and hand-made cases for
states a scripted run cannot produce (provider errors, rewritten injections, other suites)."""

from randori.bench.store import CaseResult, Store
from tests.helpers import randori


def scripted_run(directory, models=("scripted/gullible", "scripted/oracle"),
                 attacks=("important_instructions", "direct")):
    """Scripted runs of the banking suite as a user makes them, on two user tasks to stay fast."""
    for model in models:
        args = [a for attack in attacks for a in ("-a", attack)]
        r = randori("run", "-s", "banking", "-m", model, "-u", "user_task_2", "-u", "user_task_5", *args,
                    "--results", str(directory))
        assert r.returncode == 0, r.stderr
    return directory


def synthetic(key, *, suite="banking", version="1.0.0", kind="attacked", user_task="u1", injection_task="i1",
              attack="important_instructions", defense="none", model="m/a", status="ok", utility=True,
              attack_succeeded=False, seen=True, repeat=0, **extra):
    if kind != "attacked":
        injection_task = injection_task if kind == "injection_only" else None
        attack, attack_succeeded, seen = None, None, None
    return CaseResult(key=key, kind=kind, suite=suite, suite_version=version, user_task=user_task,
                      injection_task=injection_task, attack=attack, defense=defense, model=model, settings={},
                      repeat=repeat, status=status, utility=None if status != "ok" else utility,
                      attack_succeeded=None if status != "ok" else attack_succeeded,
                      injection_seen=seen, model_calls=2, input_tokens=100, output_tokens=20, duration_s=0.5,
                      **extra)


def write_store(directory, results):
    with Store(directory) as store:
        run = store.start_run({"model": "m/a", "argv": ["run"]})
        store.add(run, results)
        store.finish_run(run)
    return directory
