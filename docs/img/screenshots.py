"""Regenerate the screenshots in docs/img/ (headless Chromium through Playwright): `make screenshots`.

    .venv/bin/python docs/img/screenshots.py [RESULTS_DIR]

With no RESULTS_DIR, a fresh scripted run is made in a temporary directory: the demo's run (banking,
scripted/gullible and scripted/wary, no defense and tool_filter) and a code-track run with the
scripted coder, both offline and deterministic. With RESULTS_DIR, its store is used as it is (it must
hold cases of scripted/gullible under `none` and `tool_filter` with important_instructions). The
report is written next to the store, the viewer is started on a free loopback port, and the pictures
are written next to this script. Chromium is Debian's (/usr/bin/chromium; `apt-get install chromium`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
CHROMIUM = Path("/usr/bin/chromium")
# The demo's run (see DEMO_RUN in the Makefile), and the code track with its scripted coder.
RUNS = (["run", "--suite", "banking", "-m", "scripted/gullible", "-m", "scripted/wary", "-d", "none",
         "-d", "tool_filter"],
        ["code", "run"])


def fresh_run(results: Path) -> None:
    """The scripted runs the pictures show, into an empty results directory."""
    for args in RUNS:
        done = subprocess.run([sys.executable, "-m", "randori", *args, "--results", str(results)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"screenshots: randori {' '.join(args)} failed:\n{done.stderr}")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def main(results: Path) -> None:
    report = results / "report.html"
    subprocess.run([sys.executable, "-m", "randori", "report", "-r", str(results), "--html", str(report)], check=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    viewer = subprocess.Popen([sys.executable, "-m", "randori", "view", "-r", str(results), "--port", str(port)])
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                httpx.get(base + "/")
                break
            except httpx.TransportError:
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            page.goto(report.resolve().as_uri())
            page.screenshot(path=HERE / "report-headline.png")
            page.locator("#utility-vs-attack").screenshot(path=HERE / "report-utility-vs-attack.png")
            page.locator("div.figure[id^=heatmap]").first.screenshot(path=HERE / "report-heatmap.png")
            if page.locator("#code-rounds").count():
                page.locator("#code-rounds").screenshot(path=HERE / "report-code-rounds.png")
            page.goto(base + "/cases?model=scripted/gullible&defense=tool_filter")
            page.screenshot(path=HERE / "viewer-cases.png")
            page.goto(base + "/cases?model=scripted/gullible&outcome=hijacked&defense=none"
                      "&attack=important_instructions")
            page.locator("a.tile").first.click()
            page.wait_for_url("**/case/**")
            page.screenshot(path=HERE / "viewer-case.png")
            box = page.locator("li.msg.tool:has(mark.inj)").first.bounding_box()
            assert box is not None
            clip = {"x": box["x"], "y": box["y"], "width": box["width"], "height": min(box["height"], 520)}
            page.screenshot(path=HERE / "viewer-injection.png", full_page=True, clip=clip)
            page.locator("table#diff").screenshot(path=HERE / "viewer-diff.png")
            browser.close()
    finally:
        viewer.terminate()
        viewer.wait()


if __name__ == "__main__":
    if not CHROMIUM.exists():
        sys.exit(f"screenshots: {CHROMIUM} is missing (apt-get install chromium)")
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory(prefix="randori-screenshots-") as tmp:
            # Run where the store is, so the pictures name it `results` rather than a random path.
            os.chdir(tmp)
            fresh_run(Path("results"))
            main(Path("results"))
