"""`randori export --format parquet`: tables pandas loads, whose rates are the report's."""

import json

import pytest

from tests.export.conftest import export

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def tables(two_by_two, tmp_path_factory):
    out = tmp_path_factory.mktemp("parquet")
    export(two_by_two, "parquet", out)
    return {name: pd.read_parquet(out / f"{name}.parquet") for name in ("cases", "tool_calls", "headline")}


def test_rates_computed_from_the_cases_table_equal_the_report(tables, report_json):
    cases = tables["cases"]
    ok = cases[cases.status == "ok"]
    assert len(report_json["rows"]) == 4
    for row in report_json["rows"]:
        mine = ok[(ok.model == row["model"]) & (ok.defense == row["defense"]) & (ok.suite == row["suite"])]
        attacked = mine[(mine.kind == "attacked") & (mine.attack == row["attack"])]
        benign = mine[mine.kind == "benign"]
        for name, column in (("attack_success", attacked.attack_succeeded),
                             ("utility_under_attack", attacked.utility_under_attack),
                             ("injection_seen", attacked.injection_seen), ("benign_utility", benign.utility)):
            assert (int(column.sum()), len(column)) == (row[name]["successes"], row[name]["n"]), name
            assert column.mean() == row[name]["rate"], name
        group = cases[(cases.model == row["model"]) & (cases.defense == row["defense"])]
        assert int(group.input_tokens.sum()) == row["input_tokens"]


def test_the_headline_table_is_the_reports(tables, report_json):
    headline = tables["headline"]
    assert len(headline) == len(report_json["rows"])
    for _, h in headline.iterrows():
        row = next(r for r in report_json["rows"] if (r["model"], r["defense"]) == (h.model, h.defense))
        assert (h.attack_success, h.attack_success_low, h.attack_success_n) == (
            row["attack_success"]["rate"], row["attack_success"]["low"], row["attack_success"]["n"])


def test_column_types_and_one_row_per_tool_call(tables, store_rows):
    cases, calls = tables["cases"], tables["tool_calls"]
    assert len(cases) == len(store_rows) and cases.key.is_unique
    assert str(cases.input_tokens.dtype) == "int64" and str(cases.duration_s.dtype) == "float64"
    assert set(cases.utility.dropna().unique()) <= {True, False}
    # utility_under_attack is set for attacked cases only
    assert cases[cases.kind != "attacked"].utility_under_attack.isna().all()
    made = sum(len(m.get("tool_calls") or []) for r in store_rows for m in r["messages"] if m["role"] == "assistant")
    assert len(calls) == made and set(calls.key) <= set(cases.key)
    withheld = calls[calls.annotations.apply(lambda a: any("withheld" in n for n in a))]
    assert len(withheld) and (withheld.vectors_seen.apply(len) > 0).all()
    first = cases.iloc[0]
    assert json.loads(first.messages)[1]["content"] == first.user_prompt


def test_cases_of_other_suite_versions_are_left_out_unless_asked_for(tmp_path):
    from randori.suites import get_suite
    from tests.helpers import randori
    from tests.report.stores import synthetic, write_store

    store = write_store(tmp_path / "r", [synthetic("new", version=get_suite("banking").version),
                                         synthetic("old", user_task="u2", version="0.0.1")])
    assert "1 cases of other suite versions left out" in export(store, "parquet", tmp_path / "a")
    assert list(pd.read_parquet(tmp_path / "a" / "cases.parquet").key) == ["new"]
    r = randori("export", "-f", "parquet", "-r", str(store), "-o", str(tmp_path / "b"), "--all-versions")
    assert r.returncode == 0 and "left out" not in r.stdout
    assert sorted(pd.read_parquet(tmp_path / "b" / "cases.parquet").key) == ["new", "old"]
