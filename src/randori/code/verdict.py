"""How a task's tests reach the code under test: from their own process (`separate`), or, where a
data set's tests need the code's module namespace, from inside it (`shared`).

Decided from the tests and the data set's secure reference (trusted text), never from the code
being judged, so one task is always judged the same way. A name a test uses without defining it
is resolved against the reference: an import there becomes the same import in the tests'
namespace; a top-level function becomes a stand-in that calls the candidate's function of that
name across the boundary; anything else (a Flask `app`, a global, a class) needs the shared
namespace. Tests that patch modules the code uses (`os.system = ...`, `mock.patch`) need it too, and
so do tests that define names the code uses, reach into the code's globals, call it inside a
context of their process (a Flask request context), hand its function to a library (a view of the
test's own app), start a process whose id they give it, or look at the type or text of an object
it returns.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from functools import lru_cache

SEPARATE, SHARED = "separate", "shared"
# Names the judge itself provides to tests.
PROVIDED = frozenset({"candidate", "SOLUTION_SOURCE", "candidate_cpu_time", "candidate_memory_peak",
                      "set_candidate_env", "seed_candidate_random", "__name__", "__file__", "__builtins__"})


@dataclass(frozen=True)
class VerdictPlan:
    isolation: str
    imports: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
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
        tree = ast.parse(reference)
    except SyntaxError:
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


# Tests that look at or change their own process (its environment, children, memory, CPU time,
# random state) mean the code's process when they share it: they need the shared namespace.
PROCESS_STATE = {("psutil", None), ("os", "getpid"), ("os", "getppid"), ("os", "putenv"), ("os", "unsetenv"),
                 ("resource", "getrusage"), ("tracemalloc", None), ("random", "seed"), ("time", "process_time"),
                 ("threading", "active_count"), ("threading", "enumerate"), ("gc", "get_objects"),
                 ("subprocess", "Popen")}
_ENV_WRITES = {"update", "pop", "setdefault", "clear", "__setitem__", "__delitem__"}


def _uses_process_state(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and (node.id, None) in PROCESS_STATE:
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in PROCESS_STATE or (node.value.id, None) in PROCESS_STATE:
                return True
        if isinstance(node, (ast.Subscript, ast.Attribute)) and _is_environ(node.value):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
                return True
            if isinstance(node, ast.Attribute) and node.attr in _ENV_WRITES:
                return True
    return False


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)
            and node.value.id == "os")


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
# Modules whose value types cross the boundary as themselves (`_sandbox_wire`): a test may check them.
CROSSING_TYPES = frozenset({"datetime", "decimal", "uuid", "pathlib", "ssl"})


def _reaches_into_code(tree: ast.AST, code_names: set[str], test_defined: set[str]) -> str:
    """Why the tests need the code's own objects, or "" when they do not."""
    results: set[str] = set()
    in_messages: set[int] = set()  # an assertion's message only explains a failure
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _calls_code(node.value, code_names):
            results.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if isinstance(node, ast.Assert) and node.msg is not None:
            in_messages.update(id(n) for n in ast.walk(node.msg))
    for node in ast.walk(tree):
        if id(node) in in_messages:
            continue
        if isinstance(node, ast.Attribute) and node.attr == "__globals__":
            return "the tests reach into the code's globals"
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                isinstance(i.context_expr, ast.Call) and isinstance(i.context_expr.func, ast.Attribute)
                and i.context_expr.func.attr in PROCESS_CONTEXTS for i in node.items):
            return "the tests run the code inside a context of their process"
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        values = [*node.args, *(k.value for k in node.keywords)]
        # A library that gets the code's function (a view for the test's app) calls it in its own context.
        if not (isinstance(func, ast.Name) and (func.id in test_defined or hasattr(builtins, func.id))) and any(
                isinstance(v, ast.Name) and v.id in code_names for v in values):
            return "the tests hand the code's function to a library that calls it"
        if isinstance(func, ast.Name) and func.id in ("isinstance", "str", "repr") and node.args:
            subject = node.args[0]
            of_code = _calls_code(subject, code_names) or (isinstance(subject, ast.Name) and subject.id in results)
            typed = func.id != "isinstance" or (len(node.args) > 1 and any(
                isinstance(t, ast.Attribute) and _root(t) not in CROSSING_TYPES for t in ast.walk(node.args[1])))
            if of_code and typed:
                return "the tests look at the type or text of an object the code returns"
    return ""


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
        return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    except SyntaxError:
        return set()


def _root(node: ast.AST) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _calls_code(node: ast.AST, code_names: set[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in code_names


@lru_cache(maxsize=4096)
def plan_verdict(tests: str, reference: str, entry_point: str) -> VerdictPlan:
    try:
        tree = ast.parse(tests)
    except SyntaxError:
        return VerdictPlan(SEPARATE)  # the tests fail to load either way, and say why
    bound, loaded = _bound_and_loaded(tree)
    free = loaded - bound - set(dir(builtins)) - PROVIDED
    test_imports = {n for stmt in ast.walk(tree) if isinstance(stmt, (ast.Import, ast.ImportFrom))
                    for n in (a.asname or a.name.split(".")[0] for a in stmt.names)}
    ref_imports, ref_functions, ref_others = _reference_bindings(reference)
    imports: list[str] = []
    functions: list[str] = []
    needs_namespace: list[str] = []
    for name in sorted(free):
        if name in ref_imports:
            imports.append(ref_imports[name])
        elif name in ref_functions or name == entry_point:
            functions.append(name)
        elif name in ref_others:
            needs_namespace.append(name)
    if needs_namespace:
        return VerdictPlan(SHARED, reason="the tests use the code's " + ", ".join(f"`{n}`" for n in needs_namespace))
    if _patches_modules(tree, test_imports | set(ref_imports) & free):
        return VerdictPlan(SHARED, reason="the tests patch modules the code uses")
    if _uses_process_state(tree):
        return VerdictPlan(SHARED, reason="the tests inspect or change their own process (environment, children, "
                                          "memory, CPU time, random state)")
    provided = _top_level_bindings(tree) & _loaded_names(reference)
    if provided:
        return VerdictPlan(SHARED, reason="the tests define " + ", ".join(f"`{n}`" for n in sorted(provided))
                           + ", which the code uses")
    test_defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    why = _reaches_into_code(tree, {"candidate", entry_point, *functions}, test_defined)
    if why:
        return VerdictPlan(SHARED, reason=why)
    return VerdictPlan(SEPARATE, tuple(imports), tuple(functions))
