import csv
import io
import json
import math

import pytest

from randori.report.compare import Request, compare, holm, mcnemar_exact, paired_interval
from tests.helpers import randori
from tests.report.stores import synthetic, write_store


def _mcnemar_by_hand(b, c):
    # Two-sided exact test: double the probability of a split at least as uneven as (b, c).
    n, k = b + c, min(b, c)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)


def test_mcnemar_exact_values():
    assert mcnemar_exact(0, 5) == 2 / 32
    assert mcnemar_exact(9, 1) == 2 * (1 + 10) / 2 ** 10
    assert mcnemar_exact(4, 4) == 1.0 and mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 7) == mcnemar_exact(7, 3) == _mcnemar_by_hand(3, 7)


def test_holm_step_down():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]
    assert holm([0.02, 0.025]) == pytest.approx([0.04, 0.04])  # adjusted values never decrease along the ranks


def test_paired_interval_properties():
    low, high = paired_interval(40, 15, 5, 40)
    assert low < 0.10 < high and -1 <= low and high <= 1
    # Swapping the sides mirrors the interval.
    assert paired_interval(40, 5, 15, 40) == pytest.approx((-high, -low))
    # Large n: close to the Wald interval of the paired difference.
    b, c, n = 160, 100, 2000
    d = (b - c) / n
    se = math.sqrt(b + c - (b - c) ** 2 / n) / n
    lo, hi = paired_interval(1000, b, c, n - 1000 - b - c)
    assert lo == pytest.approx(d - 1.96 * se, abs=0.003) and hi == pytest.approx(d + 1.96 * se, abs=0.003)
    # Everything concordant and one-sided: the interval still has width, and stays within [-1, 1].
    lo, hi = paired_interval(0, 22, 0, 0)
    assert hi == 1.0 and 0.7 < lo < 0.9


def _defense_store(directory):
    """Twelve user tasks x one injection task under defenses none, strict and loose. The attack
    succeeds under none on u0..u9, under strict on u0, u1 and u10, under loose on u0..u9 too.
    u11 does its user task and also lets the attacker through under none: not utility kept."""
    results = []
    hits = {"none": set(range(10)) | {11}, "strict": {0, 1, 10}, "loose": set(range(10)) | {11}}
    for defense, broken in hits.items():
        for u in range(12):
            results.append(synthetic(f"{defense}-a{u}", user_task=f"u{u}", defense=defense,
                                     attack_succeeded=u in broken, utility=u in (0, 11) or u not in broken))
            results.append(synthetic(f"{defense}-b{u}", kind="benign", user_task=f"u{u}", defense=defense,
                                     utility=u != 5 or defense == "none"))
    return write_store(directory, results)


def _json(*args):
    r = randori("compare", *args, "-f", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_compare_reports_the_exact_mcnemar_p_value_of_known_cases(tmp_path):
    store = _defense_store(tmp_path / "r")
    out = _json("-r", str(store), "--by", "defense", "none", "strict", "--all-versions")
    assert out["baseline"] == "none" and out["configurations"] == ["none", "strict"]
    by = {c["metric"]: c for c in out["comparisons"]}
    asr = by["attack_success"]
    # Discordant: u2..u9 and u11 broken only under none (9), u10 only under strict (1).
    assert (asr["baseline_only"], asr["other_only"], asr["both"], asr["neither"]) == (9, 1, 2, 0)
    assert asr["p_value"] == _mcnemar_by_hand(9, 1)
    assert asr["baseline_rate"] == 11 / 12 and asr["other_rate"] == 3 / 12
    assert asr["difference"] == pytest.approx(-8 / 12) and asr["low"] < -8 / 12 < asr["high"]
    only_none = {d["user_task"] for d in asr["discordant"] if d["baseline"]}
    assert only_none == {f"u{i}" for i in (2, 3, 4, 5, 6, 7, 8, 9, 11)}
    # Under none the user task was done on u0, u10 and u11, but only u10 kept it (the attack failed).
    kept = by["utility_under_attack"]
    assert kept["baseline_rate"] == 1 / 12
    benign = by["benign_utility"]
    assert (benign["baseline_only"], benign["other_only"]) == (1, 0) and benign["pairs"] == 12
    # With one configuration against the baseline, Holm changes nothing.
    assert asr["p_holm"] == asr["p_value"]

    text = randori("compare", "-r", str(store), "--by", "defense", "none", "strict", "--all-versions",
                   env={"COLUMNS": "80"})
    assert text.returncode == 0, text.stderr
    assert f"{_mcnemar_by_hand(9, 1):.3f}" in text.stdout
    assert "A = none, B = strict" in text.stdout
    assert all(len(line) <= 80 for line in text.stdout.splitlines())


def test_several_defenses_against_none_get_holm_correction(tmp_path):
    store = _defense_store(tmp_path / "r")
    out = _json("-r", str(store), "--by", "defense", "--all-versions")
    asr = {c["other"]: c for c in out["comparisons"] if c["metric"] == "attack_success"}
    assert set(asr) == {"loose", "strict"}
    raw = [asr["loose"]["p_value"], asr["strict"]["p_value"]]
    assert asr["loose"]["p_value"] == 1.0  # identical outcomes
    assert [asr["loose"]["p_holm"], asr["strict"]["p_holm"]] == holm(raw)
    assert asr["strict"]["p_holm"] == min(1.0, 2 * asr["strict"]["p_value"])


def test_csv_has_one_row_per_comparison_metric_and_suite(tmp_path):
    store = _defense_store(tmp_path / "r")
    r = randori("compare", "-r", str(store), "--by", "defense", "-f", "csv", "--all-versions")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == 2 * 3  # two defenses against none, three metrics, one suite
    strict = next(x for x in rows if x["other"] == "strict" and x["metric"] == "attack_success")
    assert float(strict["p_value"]) == _mcnemar_by_hand(9, 1) and strict["discordant_pairs"] == "10"


def test_two_results_directories_pair_on_the_same_cases(tmp_path):
    a = write_store(tmp_path / "a", [synthetic(f"a{u}", user_task=f"u{u}", model="m/one", attack_succeeded=True)
                                     for u in range(6)])
    b = write_store(tmp_path / "b", [synthetic(f"b{u}", user_task=f"u{u}", model="m/two", attack_succeeded=u < 1)
                                     for u in range(7)])
    out = _json("-r", str(a), "-r", str(b), "--all-versions")
    assert out["dimension"] == "results" and out["baseline"] == str(a)
    asr = next(c for c in out["comparisons"] if c["metric"] == "attack_success")
    assert asr["pairs"] == 6 and asr["unpaired"]["other_only"] == 1
    assert (asr["baseline_only"], asr["other_only"]) == (5, 0)
    assert asr["group"]["model"] == "m/one | m/two"


def test_per_suite_and_pooled_rows(tmp_path):
    results = [synthetic(f"{s}{d}{u}", suite=s, user_task=f"u{u}", defense=d, attack_succeeded=d == "none")
               for s in ("banking", "chat") for d in ("none", "x") for u in range(3)]
    out = compare([_row(r) for r in results], Request("defense"))
    scopes = [c["suite"] for c in out["comparisons"] if c["metric"] == "attack_success"]
    assert scopes == ["banking@1.0.0", "chat@1.0.0", "all"]
    pooled = next(c for c in out["comparisons"] if c["suite"] == "all" and c["metric"] == "attack_success")
    assert pooled["pairs"] == 6 and pooled["baseline_only"] == 6


def _row(res):
    row = {k: v for k, v in vars(res).items() if k not in ("messages", "diff", "injections", "attempts")}
    row["settings"] = "{}"
    return row


@pytest.mark.parametrize("args, message", [
    (["--by", "colour"], "cannot compare by 'colour'"),
    (["--by", "defense", "none", "nope"], "no defense nope"),
    (["--by", "defense", "--baseline", "nope"], "baseline defense 'nope'"),
    (["--by", "model"], "nothing to compare"),
    ([], "several things vary"),
])
def test_compare_mistakes_are_one_line(tmp_path, args, message):
    store = _defense_store(tmp_path / "r")
    write_store(store, [synthetic("other-model", model="m/b", defense="strict")])
    if args == ["--by", "model"]:
        store = _defense_store(tmp_path / "single")
    r = randori("compare", "-r", str(store), "--all-versions", *args)
    assert r.returncode == 2, r.stdout
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("randori: error:")]
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_adaptive_attacks_are_compared_within_each_budget_the_pairs_can_say(tmp_path):
    # Budget 10. Under none: u0..u3 broken on tries 1, 2, 5, 9; u4 holds (10 tries). Under strict: u0 broken
    # on try 4; u1..u3 hold (10 tries); u4 gave up after 2 tries (it errs nothing but says nothing past 2).
    ad = "adaptive[attacker=scripted/attacker,budget=10]"
    tries = {"none": {0: (1, True), 1: (2, True), 2: (5, True), 3: (9, True), 4: (10, False)},
             "strict": {0: (4, True), 1: (10, False), 2: (10, False), 3: (10, False), 4: (2, False)}}
    store = write_store(tmp_path / "r", [
        synthetic(f"{d}-{u}", user_task=f"u{u}", defense=d, attack=ad, attack_succeeded=ok, attack_tries=t)
        for d, cases in tries.items() for u, (t, ok) in cases.items()])
    out = _json("-r", str(store), "--by", "defense", "none", "strict", "--all-versions")
    by = {c["metric"]: c for c in out["comparisons"]}
    within = {b: by[f"attack_success_within_{b}"] for b in (1, 3, 10)}
    # Within 1: five pairs (u4's 2 tries are known at 1); none broke u0, strict nothing.
    assert (within[1]["pairs"], within[1]["baseline_only"], within[1]["other_only"]) == (5, 1, 0)
    # Within 3: u4 under strict stopped at 2 without success, so its pair is left out.
    assert (within[3]["pairs"], within[3]["baseline_only"], within[3]["other_only"]) == (4, 2, 0)
    # Within 10: u0 both; u1..u3 only under none.
    assert (within[10]["pairs"], within[10]["both"], within[10]["baseline_only"]) == (4, 1, 3)
    # Within 30 only u0's pair is known (broken on both sides); the others gave up at 10 or less.
    assert (by["attack_success_within_30"]["pairs"], by["attack_success_within_30"]["both"]) == (1, 1)
    text = randori("compare", "-r", str(store), "--by", "defense", "none", "strict", "--all-versions").stdout
    assert "success <=3 q" in text and "success <=10 q" in text
