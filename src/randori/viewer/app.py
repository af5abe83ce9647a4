"""The viewer's web app (Starlette): runs, a grid of cases coloured by outcome, one case's trace.

Pages are rendered on the server from the package's Jinja2 templates; the only script is a form
that submits itself when a filter changes."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

import randori
from randori.viewer import explain
from randori.viewer import queries as q
from randori.viewer.guard import LocalOnly
from randori.viewer.highlight import highlight
from randori.viewer.templating import render

GRID_PAGE = 1000
LIST_PAGE = 100


def create_app(results_dir: str | Path, hosts: tuple[str, ...] = ()) -> Starlette:
    """The viewer over `results_dir`, answering requests for this machine and for `hosts`."""
    path = q.prepare(Path(results_dir))

    def page(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        with q.connect(path) as conn:
            has_code = q.has_code(conn)
        html = render(template, request=request, store=str(results_dir), version=randori.__version__,
                      outcomes=q.OUTCOMES, Filters=q.Filters, has_code=has_code, **ctx)
        return HTMLResponse(html, status_code=status)

    def error(request: Request, status: int, message: str) -> HTMLResponse:
        return page(request, "error.html", status=status, status_code=status, message=message)

    def index(request: Request) -> Response:
        with q.connect(path) as conn:
            return page(request, "index.html", runs=q.runs(conn), groups=q.groups(conn))

    def cases(request: Request) -> Response:
        try:
            f = q.Filters.parse(request.query_params)
        except q.BadFilter as e:
            return error(request, 400, str(e))
        size = GRID_PAGE if f.view == "grid" else LIST_PAGE
        if f.page > q.MAX_NUMBER // size:  # past what SQLite's OFFSET can hold: no such page anyway
            return error(request, 404, f"page {f.page} does not exist")
        with q.connect(path) as conn:
            rows, total = q.page(conn, f, size)
            ctx: dict[str, Any] = {"rows": rows, "total": total, "counts": q.outcome_counts(conn, f),
                                   "facets": q.facets(conn)}
        pages = max(1, -(-total // size))
        if f.page > pages:
            return error(request, 404, f"page {f.page} does not exist (there are {pages})")
        return page(request, "cases.html", f=f, pages=pages, size=size, **ctx)

    def case_page(request: Request) -> Response:
        key = request.path_params["key"]
        try:
            f = q.Filters.parse(request.query_params)
        except q.BadFilter as e:
            return error(request, 400, str(e))
        with q.connect(path) as conn:
            c = q.case(conn, key)
            if c is None:
                return error(request, 404, f"no case with key {key} in this store")
            t = q.trace(conn, key) or {"injections": {}, "messages": [], "diff": []}
            prev_key, next_key = q.neighbours(conn, f, key)
            goal = _goal(c) or (q.stored_goal(conn, c) if c.get("injection_task") else None)
        marks = _data_given(c)
        messages = [_message(m, t["injections"] or {}, marks) for m in t["messages"] or []]
        diff = t["diff"] or []
        marked, goal_known = _goal_rows(c, diff, t["injections"] or {})
        return page(request, "case.html", c=c, f=f, injections=t["injections"] or {}, messages=messages,
                    data_given=[_describe_mark(fd) for fd in marks],
                    attempts=t.get("attempts") or [], why=explain.why(c), goal_known=goal_known,
                    parts=explain.check_parts(c, t.get("checks")),
                    diff=[_diff_row(d, i in marked) for i, d in enumerate(diff)], goal=goal, prev_key=prev_key,
                    next_key=next_key, prompt=next((m["content"] for m in messages if m["role"] == "user"), ""))

    def case_json(request: Request) -> Response:
        key = request.path_params["key"]
        with q.connect(path) as conn:
            c = q.case(conn, key)
            if c is None:
                return JSONResponse({"error": f"no case with key {key}"}, status_code=404)
            return JSONResponse({"case": c, "trace": q.trace(conn, key)})

    def code_index(request: Request) -> Response:
        with q.connect(path) as conn:
            configs = q.code_tasks(conn)
        return page(request, "code.html", configs=configs)

    def code_page(request: Request) -> Response:
        key = request.path_params["key"]
        with q.connect(path) as conn:
            rounds = q.code_task(conn, key)
        if not rounds:
            return error(request, 404, f"no code-track task with key {key} in this store")
        return page(request, "code_task.html", rounds=rounds, t=rounds[-1])

    return Starlette(middleware=[Middleware(LocalOnly, hosts=hosts)], routes=[
        Route("/", index),
        Route("/code", code_index),
        Route("/code/{key:str}", code_page),
        Route("/cases", cases),
        Route("/case/{key:str}.json", case_json),
        Route("/case/{key:str}", case_page),
    ])


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=False)


def _data_given(c: dict[str, Any]) -> list[Any]:
    """What only the data gives in the case's user task (`UserTask.data_given`), if the suite at the
    version the case ran is installed here and is not a plugin's; else nothing is marked."""
    suite = _suite(c["suite"], c["suite_version"])
    task = suite.user_tasks.get(c.get("user_task") or "") if suite is not None else None
    return list(getattr(task, "data_given", ())) if task is not None else []


def _describe_mark(fd: Any) -> str:
    what = f"the value of {fd.function}.{fd.arg}" if fd.arg else f"the step {fd.function}"
    return what + (f", given by “{fd.shown}”" if fd.shown else "")


def _carries(call: dict[str, Any], marks: list[Any]) -> list[str]:
    """The marks a call of the agent's carries: a call of a marked function (with the marked argument)."""
    from randori.vocabulary import ToolCall

    try:
        tc = ToolCall(function=call.get("function", ""), args=call.get("args") or {})
    except Exception:  # arguments the model sent unparsed
        return []
    return [_describe_mark(fd) for fd in marks if fd.marks(tc)]


def _message(m: dict[str, Any], injections: dict[str, str], marks: list[Any] | None = None) -> dict[str, Any]:
    """A stored message as the template shows it: tool output with injected text marked, the
    vectors that reached the raw output but no longer appear in what the model saw, and on a call the
    data-given values or step of the user's task it carries."""
    out: dict[str, Any] = {"role": m.get("role", ""), "content": m.get("content", ""),
                           "annotations": m.get("annotations", []), "usage": m.get("usage"),
                           "tool_calls": [{"function": c.get("function", ""), "id": c.get("id", ""),
                                           "args": _pretty(c.get("args", {})), "parse_error": c.get("parse_error"),
                                           "data_given": _carries(c, marks or [])}
                                          for c in m.get("tool_calls", [])]}
    result = m.get("tool_result")
    if result is not None:
        seen = result.get("vectors_seen", [])
        html, marked = highlight(out["content"], {v: injections[v] for v in injections})
        out.update(function=result.get("function", ""), error=result.get("error"), html=html, vectors_seen=seen,
                   rewritten=[v for v in seen if v not in marked])
    return out


def _diff_row(d: dict[str, Any], goal: bool = False) -> dict[str, Any]:
    before, after = d.get("before"), d.get("after")
    change = "added" if before is None else "removed" if after is None else "changed"
    return {"path": d.get("path", ""), "before": "" if before is None else _pretty(before),
            "after": "" if after is None else _pretty(after), "change": change, "goal": goal}


def _goal_rows(c: dict[str, Any], diff: list[dict[str, Any]], injections: dict[str, str]) -> tuple[set[int], bool]:
    """Rows of the case's diff the attacker's goal touches, and whether that could be worked out (the
    same suite version installed, and its goal replayed without failing)."""
    if c["kind"] != "attacked" or not c.get("injection_task"):
        return set(), False
    suite = _suite(c["suite"], c["suite_version"])
    if suite is None or c["injection_task"] not in suite.injection_tasks:
        return set(), False
    try:
        goal = explain.goal_diff(suite, c["injection_task"], injections)
    except Exception:  # a suite's own code (a plugin) failing costs the marks, not the page
        return set(), False
    return explain.touched(diff, goal), True


def _goal(c: dict[str, Any]) -> str | None:
    """The injection task's goal, when the same suite version is installed."""
    if not c.get("injection_task"):
        return None
    suite = _suite(c["suite"], c["suite_version"])
    task = suite.injection_tasks.get(c["injection_task"]) if suite is not None else None
    return getattr(task, "goal", None)


@functools.lru_cache(maxsize=32)
def _suite(name: str, version: str) -> Any:
    """The suite, when this version of it is installed and it is not a plugin's (the viewer imports none)."""
    try:
        from randori.suites import get_suite, is_plugin

        if is_plugin(name):
            return None
        suite = get_suite(name)
    except Exception:  # a suite that is not installed (or broken) only costs the goal's text
        return None
    return suite if suite.version == version else None
