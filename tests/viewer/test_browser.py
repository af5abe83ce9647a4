"""A person's path through the viewer in a real browser: Debian's headless Chromium driven by
Playwright (the `playwright` package from the dev extra; its own browser download is never used)."""

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from randori.bench.store import Store

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(f"browser test skipped: Debian's Chromium is not at {CHROMIUM} "
                "(apt-get install chromium; .ci/run does this)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="browser test skipped: the playwright package "
                               "is not installed (pip install -e '.[dev]')")


@pytest.fixture
def viewer_url(scripted_store):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "randori", "view", "-r", str(scripted_store), "--port", str(port)],
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
