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
    from randori.report.compare_text import fmt_p

    assert f">{fmt_p(gullible['p_value'])}<" in html
    # scripted/oracle obeys no injection: its 0% attack success is marked, not an invisible bar
    assert '<nav class="toc">' in html and '<a href="#comparisons">' in html and '<a href="#code">' not in html
    assert '<div class="bar asr zero" title="0.0%">' in html and '<div class="bar asr" title="100.0%">' in html


def test_a_p_value_below_printing_precision_is_not_printed_as_zero():
    from randori.report.compare_text import fmt_p

    assert fmt_p(0.0) == "< 1e-300" and fmt_p(1e-320) == "< 1e-300"
    assert fmt_p(2.5e-12) == "2.5e-12" and fmt_p(0.04) == "0.040" and fmt_p(None) == "-"


def test_html_headline_pools_first_folds_suites_and_keeps_one_colour_per_configuration(tmp_path):
    import base64

    from randori.report.figures import palette

    r = randori("run", "-s", "banking", "-s", "travel", "-u", "user_task_2", "-u", "user_task_3", "-i",
                "injection_task_2", "-i", "injection_task_3", "-m", "scripted/gullible", "-m", "scripted/oracle",
                "-d", "none", "-d", "tool_filter", "--results", str(tmp_path))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "report.html"
    assert randori("report", "-r", str(tmp_path), "--html", str(out)).returncode == 0
    page = out.read_text()
    headline = json.loads(randori("report", "-r", str(tmp_path), "-f", "json").stdout)["rows"]
    # Per configuration: its pooled row first, then its rows per suite, folded (hidden until ticked).
    table = page[page.index('<table class="headline">'):page.index("</table>", page.index('<table class="headline">'))]
    rows = re.findall(r'<tr class="([\w-]+)" data-model="([^"]+)"\s+data-defense="([^"]+)" data-attack="([^"]*)" '
                      r'data-suite="([^"]+)">', table)
    assert len(rows) == len(headline) == 4 * 3
    for i in range(0, len(rows), 3):
        assert [(c, s) for c, *_, s in rows[i:i + 3]] == [("pooled", "all"), ("per-suite", "banking"),
                                                        ("per-suite", "travel")]
    assert table.count('<label class="unfold"><input type="checkbox"> per suite (2)</label>') == 4
    assert "tbody:has(label.unfold input:not(:checked)) tr.per-suite { display: none; }" in page
    # One colour per configuration: the swatch beside it in the table and its marks in the figures.
    colors = palette(headline)
    assert len(set(colors.values())) == 4
    for (model, defense, _), color in colors.items():
        block = table[table.index(f'data-model="{model}"\n    data-defense="{defense}"'):]
        assert block.index(f'<span class="swatch" style="background: {color}">') < block.index("</tbody>")
    figure = r'<div class="figure" id="([^"]+)"><h3>.*?</h3><img alt="[^"]*" src="data:image/svg\+xml;base64,([^"]+)"'
    svgs = {fig: base64.b64decode(uri).decode() for fig, uri in re.findall(figure, page)}
    for fig in ("utility-vs-attack", "attack-success-per-suite", "defenses-scripted-gullible"):
        drawn = {c for c in colors.values() if c in svgs[fig]}
        assert drawn == ({colors[k] for k in colors if k[0] == "scripted/gullible"}
                         if fig.startswith("defenses") else set(colors.values())), fig
    # Comparisons: pooled over suites in the table, each suite's folded below it.
    from randori.suites import get_suite

    assert re.findall(r"<summary>(\w+@[\d.]+): \d+ comparisons by defense</summary>", page) == \
        [f"{n}@{get_suite(n).version}" for n in ("banking", "travel")]
    first = page[page.index('data-dimension="defense"'):]
    first = first[:first.index("</table>")]
    assert re.findall(r"<td>(\w+)</td><td class=\"num\">\d+</td>", first) and \
        set(re.findall(r"<td>(\w+)</td><td class=\"num\">\d+</td>", first)) == {"all"}
