"""The viewer's pages of scenario cases: the sessions with their verdicts, the kill chain, and why."""

from __future__ import annotations

import re
import sqlite3

import pytest

from tests.helpers import randori

pytest.importorskip("starlette", reason="the viewer extra is not installed (pip install 'randori[viewer]')")


@pytest.fixture(scope="module")
def scenario_client(tmp_path_factory):
    from starlette.testclient import TestClient

    from randori.viewer.app import create_app

    path = tmp_path_factory.mktemp("scenarios")
    r = randori("run", "-s", "banking", "-m", "scripted/gullible", "--scenarios", "--scenario", "bk_landlord_redirect",
                "--scenario", "bk_jonas_reference", "--results", str(path), timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    con = sqlite3.connect(path / "randori.sqlite")
    keys = dict(con.execute("SELECT kind, key FROM cases WHERE scenario IS NOT NULL AND (kind = 'scenario_attacked' "
                            "OR scenario = 'bk_jonas_reference')").fetchall())
    con.close()
    with TestClient(create_app(path), base_url="http://127.0.0.1") as c:
        yield c, keys


def test_an_attacked_scenario_shows_its_kill_chain_and_each_session(scenario_client):
    client, keys = scenario_client
    page = client.get(f"/case/{keys['scenario_attacked']}")
    assert page.status_code == 200, page.text
    chain = re.search(r'<tr id="kill-chain">(.*?)</tr>', page.text, re.S)
    assert chain and all(f"{s}: yes" in chain.group(1) for s in ("exposed", "persisted", "triggered", "executed"))
    assert "pay_landlord_key_deposit: not done" in page.text
    assert 'id="outcome">hijacked' in page.text and "the attacker&#39;s goal was reached" in page.text


def test_a_benign_scenario_shows_its_sessions_done_and_no_kill_chain(scenario_client):
    client, keys = scenario_client
    page = client.get(f"/case/{keys['scenario']}")
    assert page.status_code == 200, page.text
    assert 'id="kill-chain"' not in page.text and "3 of 3 sessions done" in page.text
    assert "remember_jonas_reference: done" in page.text and 'id="outcome">solved' in page.text
