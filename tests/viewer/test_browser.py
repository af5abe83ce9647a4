"""A person's path through the viewer in a real browser: Debian's headless Chromium driven by
Playwright (the `playwright` package from the dev extra; its own browser download is never used)."""

import socket
import subprocess
import sys
import time

import httpx
import pytest

from randori.bench.store import Store
from tests.helpers import CHROMIUM, CHROMIUM_ARGS, playwright_or_skip

pytestmark = pytest.mark.slow  # sandboxes, worker processes or a browser: `make test-fast` skips these

sync_api = playwright_or_skip()
ARGS = CHROMIUM_ARGS


def _serve(store):
    """`randori view` on `store` in a child process; yields its URL once it answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "randori", "view", "-r", str(store), "--port", str(port)],
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(url + "/", timeout=2)
            break
        except httpx.TransportError:
            assert proc.poll() is None and time.monotonic() < deadline, "viewer did not start"
            time.sleep(0.2)
    yield url
    proc.terminate()
    proc.wait(timeout=15)


@pytest.fixture
def viewer_url(scripted_store):
    yield from _serve(scripted_store)


@pytest.fixture
def page():
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        pg.set_default_timeout(20_000)
        yield pg
        browser.close()


def test_click_through_to_a_hijacked_case_and_see_the_injection_and_the_diff(page, viewer_url, scripted_store):
    page.goto(viewer_url + "/")
    assert page.locator("table").first.is_visible()
    page.click("header >> text=cases")
    page.wait_for_url("**/cases")
    # Choosing an outcome submits the filter form by itself.
    page.select_option("select[name=outcome]", "hijacked")
    page.wait_for_url("**outcome=hijacked**")
    tiles = page.locator("a.tile")
    assert tiles.count() == 22
    assert page.locator("a.tile:not(.o-hijacked)").count() == 0
    tiles.first.click()
    page.wait_for_url("**/case/**")

    key = page.url.split("/case/")[1].split("?")[0]
    with Store(scripted_store, create=False) as store:
        trace = store.trace(key)
    [injected] = trace["injections"].values()
    mark = page.locator("ol.trace mark.inj").first
    assert mark.is_visible()
    # Highlighted means painted differently from the text around it.
    background = mark.evaluate("e => getComputedStyle(e).backgroundColor")
    around = mark.evaluate("e => getComputedStyle(e.parentElement).backgroundColor")
    assert background != around and background not in ("rgba(0, 0, 0, 0)", "transparent")
    marked_text = " ".join(page.locator("ol.trace mark.inj").all_inner_texts())
    longest = max((ln.strip() for ln in injected.splitlines()), key=len)
    assert longest in marked_text

    diff = page.locator("table#diff")
    assert diff.is_visible()
    rows = diff.locator("tbody tr")
    assert rows.count() == len(trace["diff"]) > 0
    assert rows.first.locator("td").first.inner_text() == trace["diff"][0]["path"]
    assert page.locator("#outcome").inner_text() == "hijacked"


@pytest.fixture(scope="module")
def mixed_store(scripted_store, tmp_path_factory):
    """The scripted agent-track store plus a real code-track run of two tasks."""
    import shutil

    from tests.helpers import randori

    directory = tmp_path_factory.mktemp("mixed") / "results"
    shutil.copytree(scripted_store, directory)
    r = randori("code", "run", "--results", str(directory), "--task", "sqli-find-user", "--task",
                "path-read-document")
    assert r.returncode == 0, r.stderr
    return directory


@pytest.fixture
def mixed_url(mixed_store):
    yield from _serve(mixed_store)


def test_task_filters_why_goal_rows_and_code_track(page, mixed_url, mixed_store):
    page.goto(mixed_url + "/cases")
    # Task filters are in the page, their ids in natural order; choosing one submits the form.
    options = page.locator("select[name=injection_task] option").all_inner_texts()[1:]
    numbers = [int(o.rsplit("_", 1)[1]) for o in options]
    assert numbers == sorted(numbers) and len(numbers) == 11
    page.select_option("select[name=user_task]", "user_task_2")
    page.wait_for_url("**user_task=user_task_2**")
    page.select_option("select[name=injection_task]", "injection_task_10")
    page.wait_for_url("**injection_task=injection_task_10**")
    page.select_option("select[name=model]", "scripted/gullible")
    page.wait_for_url("**model=scripted**")
    titles = page.locator("a.tile").evaluate_all("ts => ts.map(t => t.title)")
    assert titles and all("user_task_2 × injection_task_10" in t for t in titles)

    page.locator("a.tile.o-hijacked").first.click()
    page.wait_for_url("**/case/**")
    why = page.locator("#why")
    assert why.is_visible() and "attacker's goal was reached" in why.inner_text()
    goal_rows = page.locator("table#diff tbody tr.goal")
    assert goal_rows.count() >= 1 and goal_rows.count() < page.locator("table#diff tbody tr").count()
    badge = goal_rows.first.locator(".goal-badge")
    assert badge.is_visible() and badge.inner_text() == "attacker's goal"
    assert badge.evaluate("e => getComputedStyle(e).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")

    page.click("header >> text=code track")
    page.wait_for_url("**/code")
    links = page.locator("table.code-tasks a")
    assert links.all_inner_texts() == ["path-read-document", "sqli-find-user"]
    links.first.click()
    page.wait_for_url("**/code/**")
    rounds = page.locator("section.round")
    assert rounds.count() >= 1
    assert rounds.first.locator("pre.code").is_visible()
    assert page.locator("table.tests tbody tr").count() >= 1


def test_a_case_page_reads_on_a_phone(viewer_url, scripted_store):
    with Store(scripted_store, create=False) as store:
        key = next(r["key"] for r in store.iter_cases() if r["attack_succeeded"])
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            pg = browser.new_page(viewport={"width": 390, "height": 844})
            pg.goto(f"{viewer_url}/case/{key}")
            cells = pg.locator("table#diff tbody tr").first.locator("td")
            # every cell of a change is as wide as the screen allows, not a sliver of a column
            widths = [cells.nth(i).evaluate("e => e.getBoundingClientRect().width") for i in range(cells.count())]
            assert widths and min(widths) > 250, widths
            # which part of each check decided the case: on the screen, not beyond its edge
            parts = pg.locator("#check-parts")
            assert "User task not done:" in parts.inner_text()
            assert pg.evaluate("() => document.getElementById('check-parts').scrollWidth") <= 390
            assert parts.bounding_box()["x"] + parts.bounding_box()["width"] <= 390
        finally:
            browser.close()
