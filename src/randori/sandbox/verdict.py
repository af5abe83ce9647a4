"""How a task's tests reach the code under test: from their own process (`separate`), or, where
nothing else can work, from inside the code's (`shared`, which the code could forge: such samples
are counted apart and left out of headline rates unless asked for).

Decided by the harness alone, from the tests and the data set's secure reference (trusted text),
before anything runs and never from what judged code printed, so one task is always judged the
same way. A name a test uses without defining it is resolved against the reference: an import
there becomes the same import in the tests' namespace; a top-level function becomes a stand-in
that calls the candidate's function of that name across the boundary; anything else (a Flask
`app`, a global, a class) is read from the code's process at every use and reaches the tests as a
proxy (`_sandbox_wire.RemoteObject`). What proxies cannot carry needs the shared namespace: tests
that patch modules the code uses (`os.system = ...`, `mock.patch`), define names the code uses,
reach into the code's globals, run it inside a context of their own process (their own Flask
app's request context), hand its function to a library, or look at their own process (its id,
children, memory, CPU time, random state). Objects and functions the tests define themselves (a
mock request class) cross as records whose functions call the judge back, library objects (a
`BytesIO`) as copies.
"""

from __future__ import annotations

import ast
import builtins
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

SEPARATE, SHARED = "separate", "shared"
# Names the judge itself provides to tests.
PROVIDED = frozenset({"candidate", "SOLUTION_SOURCE", "candidate_cpu_time", "candidate_memory_peak",
                      "set_candidate_env", "seed_candidate_random", "exploit_canary", "__name__", "__file__",
                      "__builtins__"})


# Flask names that work only inside an application or request context, and the names a Flask
# application object usually has in the code.
_FLASK_CONTEXT_NAMES = frozenset({"jsonify", "make_response", "url_for", "render_template", "render_template_string",
                                  "redirect", "abort", "flash", "get_flashed_messages", "send_file",
                                  "send_from_directory", "stream_with_context", "current_app", "request", "session",
                                  "g"})
_APP_NAMES = frozenset({"app", "application"})


@dataclass(frozen=True)
class VerdictPlan:
    isolation: str
    imports: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    # Other module-level names of the code the tests use: reached through proxies.
    code_names: tuple[str, ...] = ()
    reason: str = ""


def _bound_and_loaded(tree: ast.AST) -> tuple[set[str], set[str]]:
    bound: set[str] = set()
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, ast.MatchAs) and node.name:
            bound.add(node.name)
    return bound, loaded


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-level statements, looking inside if/try/with blocks (guarded imports)."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ast.If):
            out += _top_level(stmt.body) + _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            out += _top_level(stmt.body) + _top_level(stmt.orelse) + _top_level(stmt.finalbody)
            for h in stmt.handlers:
                out += _top_level(h.body)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            out += _top_level(stmt.body)
    return out


def _reference_bindings(reference: str) -> tuple[dict[str, str], set[str], set[str]]:
    """(name -> import statement, top-level functions, other top-level names) of the reference."""
    imports: dict[str, str] = {}
    functions: set[str] = set()
    others: set[str] = set()
    try:
        tree = parse(reference)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # it fails to load either way
        return imports, functions, others
    for stmt in _top_level(tree.body):
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                imports.setdefault(alias.asname or alias.name.split(".")[0], ast.unparse(ast.Import(names=[alias])))
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level:
            for alias in stmt.names:
                if alias.name != "*":
                    node = ast.ImportFrom(module=stmt.module, names=[alias], level=0)
                    imports.setdefault(alias.asname or alias.name, ast.unparse(node))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            others.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                others.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return imports, functions - others, others


# Tests that look at or change their own process (its id, children, memory, CPU time,
# random state) mean the code's process when they share it: they need the shared namespace.
# (Changes to `os.environ` are not among them: the judge passes them on before each call.)
PROCESS_STATE = {("psutil", None), ("os", "getpid"), ("os", "getppid"), ("os", "putenv"), ("os", "unsetenv"),
                 ("resource", "getrusage"), ("tracemalloc", None), ("random", "seed"), ("time", "process_time"),
                 ("threading", "active_count"), ("threading", "enumerate"), ("gc", "get_objects"),
                 ("subprocess", "Popen")}


def _uses_process_state(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and (node.id, None) in PROCESS_STATE:
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in PROCESS_STATE or (node.value.id, None) in PROCESS_STATE:
                return True
    return False


def _patches_modules(tree: ast.AST, modules: set[str]) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            owner = func.value if isinstance(func, ast.Attribute) else None
            if name == "patch" or (name == "object" and isinstance(owner, ast.Attribute) and owner.attr == "patch"):
                return True
    return False


# Context managers whose state lives in the process that enters them (Flask's request and app
# contexts, decimal's context): code called inside them must run in that process to see it.
PROCESS_CONTEXTS = frozenset({"test_request_context", "app_context", "request_context", "localcontext"})


def _reaches_into_code(tree: ast.AST, code_names: set[str], functions: set[str], test_defined: set[str]) -> str:
    """Why the tests need the code's own namespace, or "" when proxies can carry what they do.
    `code_names`: every name of the code the tests use; `functions`: those that are its functions."""
    in_messages: set[int] = set()  # an assertion's message only explains a failure
    reached = code_names | _derived(tree, code_names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.msg is not None:
            in_messages.update(id(n) for n in ast.walk(node.msg))
    for node in ast.walk(tree):
        if id(node) in in_messages:
            continue
        if isinstance(node, ast.Attribute) and node.attr == "__globals__":
            return "the tests reach into the code's globals"
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                isinstance(i.context_expr, ast.Call) and isinstance(i.context_expr.func, ast.Attribute)
                and i.context_expr.func.attr in PROCESS_CONTEXTS and _root_call(i.context_expr.func) not in reached
                for i in node.items):
            return "the tests run the code inside a context of their own process"
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        values = [*node.args, *(k.value for k in node.keywords)]
        # A library that gets the code's function (a view for the test's app) calls it in its own context.
        # (A global or an object of the code handed over arrives as a value or a proxy: that works.)
        if not (isinstance(func, ast.Name) and (func.id in test_defined or hasattr(builtins, func.id))) and \
                _root_call(func) not in code_names and any(isinstance(v, ast.Name) and v.id in functions
                                                           for v in values):
            return "the tests hand the code's function to a library that calls it"
    return ""


def _derived(tree: ast.AST, code_names: set[str]) -> set[str]:
    """Names the tests bind to the code's objects (`client = app.test_client()`, `with ... as c`)."""
    out: set[str] = set()
    for _ in range(3):
        known = code_names | out
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _root_call(node.value) in known:
                out.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name) \
                    and _root_call(node.context_expr) in known:
                out.add(node.optional_vars.id)
    return out


def _root_call(node: ast.AST) -> str:
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _top_level_bindings(tree: ast.Module) -> set[str]:
    """Functions, classes and variables the tests define at module level (besides `check`): in the
    harness the data set was written for they land in the code's namespace, and it may use them."""
    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            out.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return out - {"check"}


def _loaded_names(source: str) -> set[str]:
    try:
        return {n.id for n in ast.walk(parse(source)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()


# CPython 3.11 and 3.12 keep the AST converter's recursion depth in state shared by all threads, so two
# `ast.parse` calls at once (randori's own, Bandit's, `ast.literal_eval`'s) can fail with "SystemError: AST
# constructor recursion depth mismatch" (python/cpython#106905). Checks that run code run in threads
# (`TaskSuite.checks_run_code`) beside the event loop's tools, so every parse that can meet another one
# takes this lock: `parse` and `literal_eval` below, and Bandit's scans (`analyzers.BanditAnalyzer`).
PARSE_LOCK = threading.RLock()


def parse(source: str, mode: str = "exec") -> Any:  # ast.Module, or ast.Expression for "eval"
    """`ast.parse`, one thread at a time (`PARSE_LOCK`)."""
    with PARSE_LOCK:
        return ast.parse(source, mode=mode)


def literal_eval(text: str) -> Any:
    """`ast.literal_eval` of a text, one parse at a time (`PARSE_LOCK`)."""
    with PARSE_LOCK:
        return ast.literal_eval(text)


@lru_cache(maxsize=4096)
def plan_verdict(tests: str, reference: str, entry_point: str) -> VerdictPlan:
    try:
        tree = parse(tests)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return VerdictPlan(SEPARATE)  # the tests fail to load either way, and say why
    bound, loaded = _bound_and_loaded(tree)
    free = loaded - bound - set(dir(builtins)) - PROVIDED
    test_imports = {n for stmt in ast.walk(tree) if isinstance(stmt, (ast.Import, ast.ImportFrom))
                    for n in (a.asname or a.name.split(".")[0] for a in stmt.names)}
    ref_imports, ref_functions, ref_others = _reference_bindings(reference)
    imports: list[str] = []
    functions: list[str] = []
    needs_namespace: list[str] = []
    uses_code_app = any(n in ref_others for n in free & _APP_NAMES)
    for name in sorted(free):
        if name in ref_imports and uses_code_app and name in _FLASK_CONTEXT_NAMES \
                and ref_imports[name].startswith("from flask import"):
            # Needs the application or request context the tests opened on the code's own app (a
            # `with app.test_client()` block keeps it there): read from the code's process.
            needs_namespace.append(name)
        elif name in ref_imports:
            imports.append(ref_imports[name])
        elif name in ref_functions or name == entry_point:
            functions.append(name)
        elif name in ref_others:
            needs_namespace.append(name)
    if _patches_modules(tree, test_imports | set(ref_imports) & free):
        return VerdictPlan(SHARED, reason="the tests patch modules the code uses")
    if _uses_process_state(tree):
        return VerdictPlan(SHARED, reason="the tests inspect or change their own process (its id, children, "
                                          "memory, CPU time, random state)")
    provided = _top_level_bindings(tree) & _loaded_names(reference)
    if provided:
        return VerdictPlan(SHARED, reason="the tests define " + ", ".join(f"`{n}`" for n in sorted(provided))
                           + ", which the code uses")
    test_defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    called = {"candidate", entry_point, *functions}
    why = _reaches_into_code(tree, called | set(needs_namespace), called, test_defined)
    if why:
        return VerdictPlan(SHARED, reason=why)
    return VerdictPlan(SEPARATE, tuple(imports), tuple(functions), tuple(needs_namespace))


def collect_test_names(source: str) -> list[str]:
    """Top-level `test_*` functions of a test source, in definition order."""
    try:
        tree = parse(source)
    except SyntaxError as e:
        raise ValueError(f"test code does not parse: {e}") from e
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
