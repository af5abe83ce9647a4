import base64
import csv
import io
import json
import re
from html.parser import HTMLParser

import pytest

from randori.report import figures
from randori.report.tables import budget_rows, export_tables, flatten, task_rows, write_csv
from tests.helpers import randori
from tests.report.stores import synthetic, write_store


class _Tables(HTMLParser):
    """Collects the text of every cell of one table (the headline unless told), row by row; `attrs`
    holds each row's data-* attributes (which configuration and suite it is)."""

    def __init__(self, table="headline"):
        super().__init__()
        self.table, self.rows, self.attrs, self.depth, self.cell = table, [], [], 0, None

    def handle_starttag(self, tag, attrs):
        if tag == "table" and ("class", self.table) in attrs:
            self.depth = 1
        elif self.depth and tag == "tr":
            self.rows.append([])
            data = {k[5:]: v for k, v in attrs if k.startswith("data-")}
            self.attrs.append(data | {"class": dict(attrs).get("class")})
        elif self.depth and tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self.depth = 0
        elif self.depth and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def _json(d):
    r = randori("report", "--results", str(d), "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_html_report_is_one_self_contained_file_with_table_and_figures(scripted_store, tmp_path):
    out = tmp_path / "report.html"
    r = randori("report", "--results", str(scripted_store), "--html", str(out))
    assert r.returncode == 0, r.stderr
    assert f"Wrote {out}" in r.stderr
    html = out.read_text()
    # Self-contained: no script, nothing fetched from anywhere.
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert not re.search(r"""<link[^>]+stylesheet""", html)

    parser = _Tables()
    parser.feed(html)
    header, *body = parser.rows
    assert header[:3] == ["model · defense · attack", "suite (version)", "cases"]
    summary = _json(scripted_store)["rows"]
    assert len(body) == len(summary)
    by = {(a["model"], a["attack"]): dict(zip(header, row, strict=True)) for a, row in zip(parser.attrs[1:], body,
                                                                                           strict=True)}
    assert {(r["model"], r["attack"]) for r in summary} == set(by)
    assert {(m, a) for m in ("scripted/gullible", "scripted/oracle") for a in ("important_instructions", "direct")} \
        <= set(by)
    gull = by[("scripted/gullible", "important_instructions")]
    assert gull["model · defense · attack"] == "scripted/gullible defense none important_instructions"
    assert gull["suite (version)"] == "banking@1.4.0"
    assert gull["cases"] == "35"  # 2 benign + 11 injection tasks alone + 2 x 11 attacked
    assert gull["attack success"].startswith("100.0%") and "22/22" in gull["attack success"]
    assert gull["benign utility"].startswith("100.0%") and "2/2" in gull["benign utility"]
    oracle = by[("scripted/oracle", "direct")]
    assert oracle["attack success"].startswith("0.0%") and "0/22" in oracle["attack success"]
    assert gull["errors"] == "0"
    # Costs and times are folded below the headline, one row per headline row.
    costs = _Tables("costs")
    costs.feed(html)
    assert "model calls" in costs.rows[0] and "wall time" in costs.rows[0] and len(costs.rows) == len(parser.rows)
    assert '<details class="fold" id="costs">' in html

    # Figures are embedded images that decode, one per kind of data present.
    uris = dict(re.findall(r'<div class="figure" id="([^"]+)"><h3>.*?</h3><img alt="[^"]*" src="(data:[^"]+)"', html))
    assert {"utility-vs-attack", "attack-success-per-suite", "heatmap-banking-1-4-0"} <= set(uris)
    png = base64.b64decode(uris["heatmap-banking-1-4-0"].split(",", 1)[1])
    assert png.startswith(b"\x89PNG") and len(png) > 5000
    svg = base64.b64decode(uris["utility-vs-attack"].split(",", 1)[1])
    assert b"<svg" in svg[:400]
    # No adaptive attack, no code track in this store: those sections are left out, not drawn empty.
    assert "adaptive-budget" not in uris and 'id="code"' not in html


def test_csv_exports_the_same_numbers_as_json(scripted_store):
    data = _json(scripted_store)
    assert set(data) >= {"rows", "pivot", "tasks", "budget", "code_rounds", "code_cwe", "excluded_old_version_cases"}
    for table, key in (("headline", "rows"), ("pivot", "pivot"), ("tasks", "tasks")):
        r = randori("report", "--results", str(scripted_store), "--format", "csv", "--table", table)
        assert r.returncode == 0, r.stderr
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        assert len(rows) == len(data[key]) > 0
        for got, want in zip(rows, data[key], strict=True):
            flat = flatten(want)
            assert list(got) == list(flat)  # same columns, same order
            for col, value in flat.items():
                assert got[col] == ("" if value is None else str(value)), col
    head = randori("report", "-r", str(scripted_store), "-f", "csv").stdout.splitlines()[0].split(",")
    assert head[:7] == ["model", "defense", "attack", "suite", "suite_versions", "cases", "errors"]
    assert {"attack_success", "attack_success_low", "attack_success_high", "attack_success_successes",
            "attack_success_n"} <= set(head)
    # The heat-map table has one row per user x injection task pair and model/attack.
    assert len(data["tasks"]) == 2 * 11 * 2 * 2
    # The pivot: one cell per model and defense, taken from the `max` row (two attacks ran), as printed.
    headline = {(r["model"], r["defense"], r["suite"], r["attack"]): r for r in data["rows"]}
    assert [(p["model"], p["defense"], p["attack"]) for p in data["pivot"]] == [
        ("scripted/gullible", "none", "max"), ("scripted/oracle", "none", "max")]
    for p in data["pivot"]:
        row = headline[p["model"], p["defense"], p["suite"], p["attack"]]
        assert (p["attack_success"], p["utility_under_attack"]) == (row["attack_success"], row["utility_under_attack"])
    assert data["pivot"][0]["attack_success"]["rate"] == 1.0 and data["pivot"][1]["attack_success"]["rate"] == 0.0


@pytest.mark.parametrize("args, message", [
    (["--format", "xml"], "unknown format 'xml'"),
    (["--format", "csv", "--table", "nope"], "unknown table 'nope'"),
    (["--html", "/nonexistent/dir/report.html"], "directory /nonexistent/dir does not exist"),
])
def test_report_mistakes_exit_2_with_one_line(scripted_store, args, message):
    r = randori("report", "--results", str(scripted_store), *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    [line] = [ln for ln in r.stderr.splitlines() if ln.startswith("randori: error:")]
    assert message in line


def test_pooled_rows_and_versions_beside_every_number(tmp_path):
    # Two suites (one of them not installed here) make pooled rows; a provider error is counted apart.
    results = [synthetic(f"a{i}", suite="banking", user_task=f"user_task_{i}", attack_succeeded=i % 2 == 0)
               for i in range(4)]
    results += [synthetic(f"b{i}", suite="mailroom", version="2.1", user_task=f"u{i}", attack_succeeded=True)
                for i in range(3)]
    results.append(synthetic("err", suite="mailroom", version="2.1", status="error", error_category="rate_limit"))
    write_store(tmp_path, results)
    out = tmp_path / "r.html"
    r = randori("report", "-r", str(tmp_path), "--html", str(out), "--all-versions")
    assert r.returncode == 0, r.stderr
    parser = _Tables()
    parser.feed(out.read_text())
    header, *body = parser.rows
    cells = [dict(zip(header, row, strict=True)) for row in body]
    # The pooled row first; the rows per suite folded under it.
    assert [c["suite (version)"] for c in cells] == ["all: banking@1.0.0, mailroom@2.1 per suite (2)",
                                                     "banking@1.0.0", "mailroom@2.1"]
    assert [a["class"] for a in parser.attrs[1:]] == ["pooled", "per-suite", "per-suite"]
    pooled = cells[0]
    assert pooled["cases"] == "8" and pooled["errors"] == "1"
    assert pooled["attack success"].startswith("71.4%") and "5/7" in pooled["attack success"]
    assert "[" in pooled["attack success"]  # the interval is shown beside the rate


def test_task_rows_pool_repeats_and_keep_errors_out_of_rates():
    rows = [_row(repeat=0, success=1), _row(repeat=1, success=0), _row(repeat=2, status="error"),
            _row(user_task="u2", success=1)]
    by = {(t["user_task"], t["injection_task"]): t for t in task_rows(rows)}
    cell = by[("u1", "i1")]
    assert cell["cases"] == 3 and cell["errors"] == 1
    assert cell["attack_success"]["n"] == 2 and cell["attack_success"]["rate"] == 0.5
    assert by[("u2", "i1")]["attack_success"]["rate"] == 1.0


def test_budget_rows_read_success_within_each_budget():
    # Tries stored per case: the try that succeeded, or the whole budget (5) when the attack failed.
    rows = [_row(success=1, tries=1), _row(success=1, tries=2), _row(success=1, tries=4),
            _row(success=0, tries=5), _row(status="error", tries=3)]
    curve = {b["budget"]: b["attack_success"] for b in budget_rows(rows)}
    # Budgets beyond 5 are unknown (a failed case had only 5 tries), so they are not reported; 5 is.
    assert sorted(curve) == [1, 3, 5]
    assert [curve[b]["successes"] for b in (1, 3, 5)] == [1, 2, 3]
    assert all(c["n"] == 4 for c in curve.values())
    # Each try is a victim query: within 3, the cases spent 1 + 2 + 3 + 3 (the error case is left out).
    spent = {b["budget"]: b["victim_queries"] for b in budget_rows(rows)}
    assert spent == {1: 4, 3: 9, 5: 12}
    assert budget_rows([_row(success=1)]) == []  # fixed attacks have no budget


def test_budget_rows_give_the_attackers_spend_and_its_price():
    from randori.bench.pricing import PriceTable, parse_prices

    prices = PriceTable(parse_prices('["openai/gpt-4o-mini"]\ninput = 1.0\noutput = 2.0\n', "test"), ["test"])
    spec = "adaptive[attacker=openai/gpt-4o-mini,budget=5]"
    rows = [_row(success=1, tries=2, attack=spec) | {"attacker_calls": 1, "attacker_input_tokens": 500_000,
                                                     "attacker_output_tokens": 250_000},
            _row(success=0, tries=5, attack=spec) | {"attacker_calls": 4, "attacker_input_tokens": 500_000,
                                                     "attacker_output_tokens": 250_000}]
    [first, *_] = budget_rows(rows, prices)
    assert first["attacker"] == "openai/gpt-4o-mini" and first["attacker_calls"] == 5
    assert first["attacker_input_tokens"] == 1_000_000 and first["attacker_cost_usd"] == pytest.approx(2.0)
    # A row stored before attackers were counted: the tokens known are summed, no price is claimed.
    old = budget_rows([rows[0], _row(success=0, tries=5, attack=spec)], prices)[0]
    assert old["attacker_input_tokens"] == 500_000 and old["attacker_cost_usd"] is None
    caption = figures.budget_curve(budget_rows(rows, prices)).caption
    assert "Attacker spend: " + spec in caption and "5 attacker calls, 1,500,000 tokens, $2.00" in caption


def test_budget_figure_only_when_budget_data_exist():
    assert figures.budget_curve([]) is None
    fig = figures.budget_curve(budget_rows([_row(success=1, tries=1), _row(success=0, tries=10)]))
    assert fig is not None and fig.uri.startswith("data:image/svg+xml;base64,")


def test_heatmaps_are_capped_and_say_how_many_were_left_out():
    cells = [t for m in range(figures.MAX_HEATMAPS + 2) for t in task_rows([_row(model=f"m/{m}", success=1)])]
    figs, left = figures.task_heatmaps(cells)
    assert len(figs) == 1 and left == 2


def test_figures_are_none_without_attacked_cases():
    tables = export_tables([_row(kind="benign", success=None, attack=None)])
    assert figures.utility_vs_attack(tables["headline"]) is None
    assert figures.attack_success_per_suite(tables["headline"]) is None
    assert figures.task_heatmaps(tables["tasks"]) == ([], 0)


def test_flatten_and_csv_writer():
    row = {"model": "m", "suite_versions": ["a@1", "b@2"], "cost_usd": None,
           "attack_success": {"rate": 0.5, "low": 0.1, "high": 0.9, "successes": 1, "n": 2}}
    buf = io.StringIO()
    write_csv([row], buf)
    lines = buf.getvalue().splitlines()
    assert lines[0] == ("model,suite_versions,cost_usd,attack_success,attack_success_low,attack_success_high,"
                        "attack_success_successes,attack_success_n")
    assert lines[1] == "m,a@1;b@2,,0.5,0.1,0.9,1,2"


def _row(kind="attacked", user_task="u1", injection_task="i1", success=1, status="ok", repeat=0, tries=None,
         model="m/a", attack="important_instructions"):
    return {"kind": kind, "suite": "banking", "suite_version": "1.0.0", "model": model, "defense": "none",
            "attack": attack, "user_task": user_task, "injection_task": injection_task, "repeat": repeat,
            "status": status, "utility": 1 if status == "ok" else None,
            "attack_succeeded": success if status == "ok" else None, "injection_seen": 1,
            "attack_tries": tries, "model_calls": 1, "input_tokens": 0, "output_tokens": 0,
            "defense_calls": 0, "defense_input_tokens": 0, "defense_output_tokens": 0,
            "duration_s": 0.1, "defense_time_s": 0.0}


def _code_store(directory):
    """Code-track results written through the code track's own store: one task fixed by repair, one
    never secure, one provider error, one judged in the code's own process (left out of the rates)."""
    from randori.bench.store import Store
    from randori.code.store import CodeStore, RoundRow, TaskRecord

    def rnd(i, ok):
        return RoundRow(round=i, parses=True, functional=True, security=ok, tests_pass=ok, both=ok,
                        static_flagged=not ok, bandit_flagged=not ok, fuzz_flagged=None, parse_error=None,
                        findings=[], fuzz_findings=None, tests=[], code="def f(): pass", reply="", isolation={})

    def rec(key, task, cwe, rounds, status="ok"):
        return TaskRecord(key=key, dataset="builtin", dataset_version="1", task_id=task, cwe=cwe,
                          model="scripted/insecure-then-secure", settings={}, prompt="plain", max_rounds=2,
                          fuzz=False, analyzers="bandit", repeat=0, status=status, rounds=rounds,
                          error_category=None if status == "ok" else "timeout")

    with Store(directory) as store:
        code = CodeStore(store)
        run = store.start_run({"model": "scripted/insecure-then-secure"})
        code.add(run, rec("k1", "t1", "CWE-22", [rnd(0, False), rnd(1, True)]))
        code.add(run, rec("k2", "t2", "CWE-78", [rnd(0, False), rnd(1, False), rnd(2, False)]))
        code.add(run, rec("k3", "t3", "CWE-78", [], status="error"))
        shared = rnd(0, True)
        shared.verdict_isolation = "shared"
        code.add(run, rec("k4", "t4", "CWE-22", [shared]))
    return directory


def test_code_track_section_and_tables_come_from_the_code_store(tmp_path):
    _code_store(tmp_path)
    data = _json(tmp_path)
    assert data["rows"] == [] and data["tasks"] == []
    rounds = {r["round"]: r for r in data["code_rounds"]}
    assert sorted(rounds) == [0, 1, 2]
    # Round r counts every task after up to r repairs: t1 is fixed in round 1 and keeps it in round 2.
    assert [rounds[r]["func_sec"]["successes"] for r in (0, 1, 2)] == [0, 1, 1]
    assert all(rounds[r]["func_sec"]["n"] == 2 and rounds[r]["errors"] == 1 for r in rounds)
    cwe = {c["cwe"]: c for c in data["code_cwe"]}
    assert cwe["CWE-22"]["func_sec_final"]["rate"] == 1.0 and cwe["CWE-78"]["func_sec_final"]["rate"] == 0.0
    csv_rows = list(csv.DictReader(io.StringIO(
        randori("report", "-r", str(tmp_path), "-f", "csv", "-t", "code_rounds").stdout)))
    assert [r["func_sec_successes"] for r in csv_rows] == ["0", "1", "1"]

    out = tmp_path / "r.html"
    r = randori("report", "-r", str(tmp_path), "--html", str(out))
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    assert 'id="code"' in html and 'id="code-rounds"' in html and 'id="code-cwe"' in html
    assert "repair fixed 1 and broke 0" in html
    assert "1 sample(s) judged in the code" in html and "(it could have forged them) are left out" in html
    assert 'id="headline"' in html and "No agent-track results" in html


def test_report_counts_a_case_with_both_goals_done_as_not_kept(tmp_path):
    store = write_store(tmp_path / "r", [synthetic("k1", utility=True, attack_succeeded=False),
                                         synthetic("k2", user_task="u2", utility=True, attack_succeeded=True)])
    r = randori("report", "--results", str(store), "--format", "json", "--all-versions")
    assert r.returncode == 0, r.stderr
    [row] = json.loads(r.stdout)["rows"]
    assert (row["utility_under_attack"]["successes"], row["utility_under_attack"]["n"]) == (1, 2)
    [task_row] = [t for t in json.loads(r.stdout)["tasks"] if t["user_task"] == "u2"]
    assert task_row["utility_under_attack"]["successes"] == 0


def test_robustness_table_reads_the_held_out_split_per_defense():
    from randori.report.tables import agent_tables

    test, train = '{"name": "test", "seed": "s"}', '{"name": "train", "seed": "s"}'
    ad = "adaptive[attacker=scripted/attacker,budget=10]"
    rows = [_row(success=1) | {"split": test}, _row(user_task="u2", success=0) | {"split": test},
            _row(success=1, attack="direct") | {"split": test},
            _row(success=1, tries=3, attack=ad) | {"split": test},
            _row(success=0, tries=10, attack=ad) | {"split": test},
            _row(kind="benign", injection_task=None, attack=None) | {"split": test},
            _row(success=1, user_task="u9") | {"split": train}]  # tuned on: never in the table
    [row] = agent_tables(rows)["robustness"]
    assert (row["model"], row["defense"], row["split"]) == ("m/a", "none", "test")
    # Static: pair (u1, i1) broken by either fixed attack, (u2, i1) by none; the train row is left out.
    assert (row["static_attack_success"]["successes"], row["static_attack_success"]["n"]) == (1, 2)
    curve = row["adaptive_attack_success"][ad]
    assert [curve[b]["successes"] for b in ("1", "3", "10")] == [0, 1, 1] and curve["3"]["n"] == 2
    assert row["benign_utility"]["n"] == 1
    assert row["fidelity_benign"]["n"] == row["fidelity_under_attack"]["n"] == 0  # no task that needs its data
    from randori.suites import get_suite

    banking = get_suite("banking")
    directed = next(t for t, u in banking.user_tasks.items() if u.data_directed)
    fid = [_row(kind="benign", injection_task=None, attack=None, user_task=directed) | {
        "split": test, "suite_version": banking.version, "utility": 0}]
    [with_fid] = agent_tables(rows + fid)["robustness"]
    assert (with_fid["fidelity_benign"]["n"], with_fid["fidelity_benign"]["successes"]) == (1, 0)
    # The terminal prints it too: the fixed attacks' rate beside the adaptive curve, on the test split.
    from rich.console import Console

    from randori.report import terminal

    console = Console(width=400, record=True)
    terminal._print_robustness(console, rows)
    text = console.export_text()
    assert "robustness" in text and "(the test split only)" in text
    [line] = [ln for ln in text.splitlines() if "m/a" in ln]
    assert "50.0% [9-91] n=2" in line and "0.0% [0-66] n=2" in line and line.count("n=2") >= 4
    terminal._print_robustness(console, [r for r in rows if r["attack"] != ad])  # no adaptive attack: no table
    assert console.export_text() == ""
