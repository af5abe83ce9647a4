"""The default `randori report` in an 80-column terminal: every headline rate, one line per row."""

import json
import re

from tests.helpers import randori


def _pct(d, interval=True):
    if not d["n"]:
        return "-"
    text = f"{100 * d['rate']:.0f}"
    return f"{text} \\[{100 * d['low']:.0f}-{100 * d['high']:.0f}\\]" if interval else text


def _groups(text):
    """{group line: [row lines]} in the order printed (a group line does not start with spaces)."""
    groups, current = {}, None
    for line in text.splitlines():
        if line.startswith("  ") and current is not None:
            groups[current].append(line)
        elif line.startswith("scripted/"):
            current = line
            groups[current] = []
    return groups


def test_report_in_80_columns_shows_every_headline_rate(scripted_store):
    r = randori("report", "-r", str(scripted_store), env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = json.loads(randori("report", "-r", str(scripted_store), "-f", "json").stdout)["rows"]
    groups = _groups(r.stdout.split("how far the attacks got")[0])  # the headline table, not the one below
    assert len(rows) == 6  # two models x (two attacks + the max row), one suite
    for row in rows:
        [group] = [g for g in groups if g.startswith(f"{row['model']} · defense {row['defense']} · {row['attack']}")]
        pattern = (rf"^  {row['suite']}\s+{_pct(row['benign_utility'])}\s+{_pct(row['utility_under_attack'])}\s+"
                   rf"{_pct(row['attack_success'])}\s+{_pct(row['injection_seen'], False)}\s+"
                   rf"{_pct(row['injection_task_utility'], False)}\s+{row['errors']}$")
        assert any(re.match(pattern, line) for line in groups[group]), (pattern, groups[group])
    # The max row comes after the attacks it is made of.
    labels = [g.split(" · ")[2] for g in groups if g.startswith("scripted/gullible")]
    assert labels == ["direct", "important_instructions", "max (any attack succeeded)"]
    # The pivot of the two models under the one defense.
    pivot = r.stdout[r.stdout.index("attack success / utility under attack"):]
    assert re.search(r"scripted/gullible\s+100 / 0", pivot) and re.search(r"scripted/oracle\s+0 / 100", pivot)


def test_wide_report_keeps_the_full_table(scripted_store):
    r = randori("report", "-r", str(scripted_store), "--wide")
    assert r.returncode == 0, r.stderr
    assert "injection tasks alone" in r.stdout and "n=22" in r.stdout


def test_html_report_has_the_pivot_the_comparisons_and_a_figure_per_model(tmp_path):
    r = randori("run", "-s", "banking", "-u", "user_task_2", "-i", "injection_task_0", "-i", "injection_task_1",
                "-i", "injection_task_2", "-m", "scripted/gullible", "-m", "scripted/oracle", "-d", "none", "-d",
                "tool_filter", "--results", str(tmp_path))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "report.html"
    assert randori("report", "-r", str(tmp_path), "--html", str(out)).returncode == 0
    html = out.read_text()
    assert 'id="pivot"' in html and 'id="comparisons"' in html
    assert html.count('data-dimension="defense"') == 1 and html.count('data-dimension="model"') == 1
    # One utility-vs-attack-success figure per model, each defense a labelled point.
    assert 'id="defenses-scripted-gullible"' in html and 'id="defenses-scripted-oracle"' in html
    compared = json.loads(randori("compare", "-r", str(tmp_path), "--by", "defense", "-f", "json").stdout)
    gullible = next(c for c in compared["comparisons"] if c["group"]["model"] == "scripted/gullible"
                    and c["metric"] == "attack_success")
    # The report's section shows the same p-value as `randori compare`.
    from randori.bench.compare_text import fmt_p

    assert f">{fmt_p(gullible['p_value'])}<" in html
    # scripted/oracle obeys no injection: its 0% attack success is marked, not an invisible bar
    assert '<nav class="toc">' in html and '<a href="#comparisons">' in html and '<a href="#code">' not in html
    assert '<div class="bar asr zero" title="0.0%">' in html and '<div class="bar asr" title="100.0%">' in html


def test_a_p_value_below_printing_precision_is_not_printed_as_zero():
    from randori.bench.compare_text import fmt_p

    assert fmt_p(0.0) == "< 1e-300" and fmt_p(1e-320) == "< 1e-300"
    assert fmt_p(2.5e-12) == "2.5e-12" and fmt_p(0.04) == "0.040" and fmt_p(None) == "-"
