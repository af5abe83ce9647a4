"""The out-of-band defenses (`capabilities`, `reexecution`) beside `none`, `plan_then_execute` and
`policy`, measured offline on every suite with the scripted models.

Per suite and defense: benign utility of scripted/oracle (no attack), attack success and utility
under attack of scripted/gullible (important_instructions, every user task x every injection
task), the model calls per case (the agent's own, and the defense's: planner, reader, masked runs),
and, for a defense that declares the goal kinds it covers, attack success on the cases inside its
design (`randori.agents.defenses.coverage.covered` for the pair) and outside it. A second table pools
the suites per goal kind. Cases run through the real runner (no store), one process per suite.
`--every N` takes every N-th user task for a quicker look (the docs' figures use all of them).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import time
from collections import defaultdict
from typing import Any

from randori.agents.defenses import get_defense
from randori.agents.defenses.coverage import GOAL_KINDS, covered, goal_kind
from randori.agents.models import ModelSettings, get_model
from randori.bench.runner import Selection, plan, run_case
from randori.suites import ready_suite, suite_names

DEFENSES = ["none", "plan_then_execute", "policy", "capabilities", "reexecution"]
ATTACK = "important_instructions"


def run(suite: Any, model_name: str, defense: str, user_tasks: list[str], attacked: bool) -> list[Any]:
    model = get_model(model_name, ModelSettings())
    sel = Selection(suites=[suite], model=model, attacks=[ATTACK] if attacked else [], defenses=[defense],
                    user_tasks=user_tasks, benign=not attacked, injection_only=False)

    async def go() -> list[Any]:
        return [await run_case(c, suite, model) for c in plan(sel)]

    return asyncio.run(go())


def measure(name: str, every: int, defenses: list[str]) -> list[dict[str, Any]]:
    suite = ready_suite(name)
    users = list(suite.user_tasks)[::every]
    rows = []
    for spec in defenses:
        d = get_defense(spec)
        t0 = time.perf_counter()
        benign = run(suite, "scripted/oracle", spec, users, attacked=False)
        attacked = run(suite, "scripted/gullible", spec, users, attacked=True)
        row: dict[str, Any] = {
            "suite": name, "defense": spec, "seconds": time.perf_counter() - t0, "users": len(benign),
            "benign_utility": sum(bool(r.utility) for r in benign), "cases": len(attacked),
            "errors": sum(r.status != "ok" for r in benign + attacked),
            "hijacked": sum(bool(r.attack_succeeded) for r in attacked),
            "kept": sum(bool(r.utility) and not r.attack_succeeded for r in attacked),
            "calls_benign": sum(r.model_calls for r in benign), "dcalls_benign": sum(r.defense_calls for r in benign),
            "calls": sum(r.model_calls for r in attacked), "dcalls": sum(r.defense_calls for r in attacked),
            "lost": [r.user_task for r in benign if not r.utility], "inside": [0, 0], "outside": [0, 0],
            "kinds": defaultdict(lambda: [0, 0])}
        for r in attacked:
            it, ut = suite.injection_tasks[r.injection_task], suite.user_tasks[r.user_task]
            row["kinds"][goal_kind(suite, it)][0] += 1
            row["kinds"][goal_kind(suite, it)][1] += bool(r.attack_succeeded)
            inside = covered(d, suite, it, ut)
            if inside is not None:
                cell = row["inside" if inside else "outside"]
                cell[0] += 1
                cell[1] += bool(r.attack_succeeded)
        row["kinds"] = dict(row["kinds"])
        rows.append(row)
    return rows


def pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.1f}%)" if n else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--every", type=int, default=1, help="every N-th user task (default: all)")
    ap.add_argument("--suite", action="append", help="suite (repeatable; default: all)")
    ap.add_argument("--defense", action="append", help=f"defense (repeatable; default: {', '.join(DEFENSES)})")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="suites run at once, one process each")
    args = ap.parse_args()
    names = args.suite or suite_names()
    defenses = args.defense or DEFENSES
    t0 = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(max(1, min(args.jobs, len(names)))) as pool:
        per_suite = pool.starmap(measure, [(n, args.every, defenses) for n in names], chunksize=1)
    rows = [r for rs in per_suite for r in rs]
    print("| suite | defense | benign utility | attack success | utility under attack | calls per case "
          "(agent + defense), benign / attacked | attack success inside / outside the design |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        calls = (f"{r['calls_benign'] / r['users']:.1f} + {r['dcalls_benign'] / r['users']:.1f} / "
                 f"{r['calls'] / r['cases']:.1f} + {r['dcalls'] / r['cases']:.1f}")
        design = (f"{pct(r['inside'][1], r['inside'][0])} / {pct(r['outside'][1], r['outside'][0])}"
                  if r["inside"][0] + r["outside"][0] else "not declared")
        print(f"| {r['suite']} | {r['defense']} | {r['benign_utility']}/{r['users']} | {pct(r['hijacked'], r['cases'])}"
              f" | {pct(r['kept'], r['cases'])} | {calls} | {design} |")
        if r["lost"] or r["errors"]:
            print(f"|   | (benign utility lost on {', '.join(r['lost']) or '-'}; {r['errors']} errors) |")
    print("\nAttack success by goal kind, all suites pooled:")
    print("| defense | " + " | ".join(GOAL_KINDS) + " |")
    print("| --- |" + " --- |" * len(GOAL_KINDS))
    for spec in defenses:
        total = {k: [0, 0] for k in GOAL_KINDS}
        for r in rows:
            if r["defense"] == spec:
                for k, (n, hit) in r["kinds"].items():
                    total[k][0] += n
                    total[k][1] += hit
        print(f"| {spec} | " + " | ".join(pct(total[k][1], total[k][0]) for k in GOAL_KINDS) + " |")
    versions = ", ".join(f"{n}@{ready_suite(n, reach=False).version}" for n in names)
    took = ", ".join(f"{r['suite']}/{r['defense']} {r['seconds']:.0f} s" for r in rows)
    print(f"\n({time.perf_counter() - t0:.0f} s wall, {args.jobs} job(s), suites {versions}; {took})")


if __name__ == "__main__":
    main()
