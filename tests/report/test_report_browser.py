"""The HTML report in a real browser (Debian's headless Chromium, driven by Playwright): the headline
of several models x defenses x suites fits a 1,280 px window, folded or not, and its identity columns
stay in view when a narrower window scrolls it."""


import pytest

from tests.helpers import CHROMIUM, CHROMIUM_ARGS, playwright_or_skip, randori
from tests.report.stores import synthetic, write_store

pytestmark = pytest.mark.slow  # a browser: `make test-fast` skips it

sync_api = playwright_or_skip()
ARGS = CHROMIUM_ARGS

# (scrollWidth of the headline table, clientWidth of the box it scrolls in)
WIDTHS = """() => { const t = document.querySelector('table.headline');
                    return [t.scrollWidth, t.parentElement.clientWidth]; }"""


@pytest.fixture(scope="module")
def scripted_report(tmp_path_factory):
    """Two scripted agents x three defenses x three suites, as a user runs them."""
    results = tmp_path_factory.mktemp("browser-report")
    r = randori("run", "-s", "banking", "-s", "travel", "-s", "chat", "-u", "user_task_2", "-u", "user_task_3",
                "-i", "injection_task_2", "-i", "injection_task_3", "-m", "scripted/gullible", "-m",
                "scripted/oracle", "-d", "none", "-d", "tool_filter", "-d", "sandwich", "--results", str(results))
    assert r.returncode == 0, r.stderr
    out = results / "report.html"
    assert randori("report", "-r", str(results), "--html", str(out)).returncode == 0
    return out


@pytest.fixture(scope="module")
def long_names_report(tmp_path_factory):
    """Provider model names, long defense and attack names, five suites, an error and costs."""
    directory = tmp_path_factory.mktemp("browser-long")
    results, n = [], 0
    for model in ("anthropic/claude-sonnet-4-20250514", "openai/gpt-4.1-mini-2025-04-14", "google/gemini-2.5-pro"):
        for defense in ("none", "plan_then_execute", "spotlighting_with_datamarking"):
            for suite in ("banking", "travel", "workspace", "devops", "customer_support_desk"):
                for i in range(3):
                    n += 1
                    results.append(synthetic(f"k{n}", suite=suite, model=model, defense=defense,
                                             attack="important_instructions_with_tool_knowledge",
                                             user_task=f"user_task_{i}", attack_succeeded=i == 0,
                                             status="error" if n % 17 == 0 else "ok", error_category="server"))
    write_store(directory, results)
    out = directory / "report.html"
    r = randori("report", "-r", str(directory), "--html", str(out), "--all-versions")
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _open(browser, report, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(20_000)
    page.goto(report.as_uri())
    return page


@pytest.mark.parametrize("which", ["scripted_report", "long_names_report"])
def test_headline_fits_a_1280_px_window_folded_and_unfolded(browser, which, request):
    report = request.getfixturevalue(which)
    page = _open(browser, report, 1280)
    scroll, box = page.evaluate(WIDTHS)
    assert box >= 1200 and scroll <= box, (scroll, box)
    # Suite rows are folded under each pooled row until "per suite" is ticked.
    suite_rows = page.locator("table.headline tr.per-suite")
    assert suite_rows.count() >= 6 and not suite_rows.first.is_visible()
    for toggle in page.locator("table.headline label.unfold").all():
        toggle.click()
    assert all(row.is_visible() for row in suite_rows.all())
    scroll, box = page.evaluate(WIDTHS)
    assert scroll <= box, (scroll, box)


def test_identity_columns_stay_in_view_when_a_narrow_window_scrolls_the_headline(browser, long_names_report):
    page = _open(browser, long_names_report, 700)
    scroll, box = page.evaluate(WIDTHS)
    assert scroll > box  # too narrow: the table scrolls inside its box
    first = page.locator("table.headline tr.pooled td.id").first
    suite = page.locator("table.headline tr.pooled td.suite").first
    before = first.bounding_box()["x"], suite.bounding_box()["x"]
    page.evaluate("() => { document.querySelector('table.headline').parentElement.scrollLeft = 400; }")
    assert page.evaluate("() => document.querySelector('table.headline').parentElement.scrollLeft") > 0
    after = first.bounding_box()["x"], suite.bounding_box()["x"]
    assert after == pytest.approx(before, abs=1)  # sub-pixel rounding aside
    # while the rates under them moved left
    rate = page.locator("table.headline tr.pooled td:nth-child(6)").first
    assert rate.bounding_box()["x"] < suite.bounding_box()["x"] + 400
