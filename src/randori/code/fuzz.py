"""Type-aware mutation fuzzing of a generated function (the `--fuzz` step).

Inputs are derived on the harness side, from the function's signature (read from the code's
AST, never by importing it) and from literal example calls in the task's functional tests, then
mutated from a seed: ints by up to ±1000 and boundary values, strings and bytes by small edits
and hostile fragments, lists and dicts by adding, dropping or changing an element. The sandbox
calls the function with each input; uncaught crashes and calls that exceed the per-call time
limit (e.g. catastrophic regex backtracking) become findings fed back to repair.
"""

from __future__ import annotations

import ast
import base64
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from randori.sandbox.analyzers import Finding
from randori.sandbox.runner import RunResult
from randori.sandbox.verdict import parse as parse_source

DEFAULT_ITERATIONS = 120
MAX_FINDINGS = 5
_MISSING = object()
# Parameters that name the environment the function works in (a database file, a destination
# folder) are held at their example value: mutating them only produces "file not found" noise.
_FIXED_SUFFIXES = ("path", "dest", "dir", "directory", "db", "database", "logger")
_STR_POOL = list("abcXYZ019 _-./\\'\"<>&;|`$(){}[]%\n\r\t\x00é☃")
_FRAGMENTS = ["../", "..\\", "' OR '1'='1", "\"; --", "%00", "{0}", "{}", "\r\n", "<script>", "$(id)",
              "`id`", "%2e%2e%2f", "\u202e", "A" * 64]
# Inputs stay small: the bugs fuzzing looks for (backtracking, crashes) show on short inputs, and
# megabyte-sized names would only measure how slow any code is on absurd input.
MAX_TEXT = 2000
MAX_ITEMS = 200
_INT_EDGES = [0, -1, 1, 2, 255, 256, 65535, 65536, 2 ** 31 - 1, -(2 ** 31), 2 ** 63, -(2 ** 63)]


@dataclass
class TypeSpec:
    kind: str  # int float bool str bytes none list dict tuple any object
    args: list[TypeSpec] = field(default_factory=list)
    optional: bool = False


@dataclass
class Param:
    name: str
    spec: TypeSpec
    default: Any = _MISSING

    @property
    def fixed(self) -> bool:
        n = self.name.lower()
        return n.endswith(_FIXED_SUFFIXES) or n.startswith("db")


class NotFuzzable(Exception):
    """The function takes arguments we cannot build from its signature and examples."""


# -- signature --------------------------------------------------------------------------------

_SIMPLE = {"int": "int", "float": "float", "bool": "bool", "str": "str", "bytes": "bytes",
           "bytearray": "bytes", "None": "none", "list": "list", "List": "list", "Sequence": "list",
           "Iterable": "list", "set": "list", "dict": "dict", "Dict": "dict", "Mapping": "dict",
           "tuple": "tuple", "Tuple": "tuple", "Any": "any", "object": "any"}


def _spec(node: ast.expr | None) -> TypeSpec:
    if node is None:
        return TypeSpec("any")
    if isinstance(node, ast.Constant):
        if node.value is None:
            return TypeSpec("none")
        if isinstance(node.value, str):  # a string annotation
            try:
                return _spec(parse_source(node.value, mode="eval").body)
            except SyntaxError:
                return TypeSpec("any")
    if isinstance(node, ast.Name):
        return TypeSpec(_SIMPLE.get(node.id, "object"))
    if isinstance(node, ast.Attribute):
        return TypeSpec(_SIMPLE.get(node.attr, "object"))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _spec(node.left), _spec(node.right)
        if right.kind == "none":
            left.optional = True
            return left
        if left.kind == "none":
            right.optional = True
            return right
        return left
    if isinstance(node, ast.Subscript):
        base = _spec(node.value)
        inner = node.slice
        elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        name = node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
        if name == "Optional":
            s = _spec(elts[0])
            s.optional = True
            return s
        if name == "Union":
            specs = [_spec(e) for e in elts]
            real = [s for s in specs if s.kind != "none"] or [TypeSpec("none")]
            real[0].optional = len(real) < len(specs)
            return real[0]
        base.args = [_spec(e) for e in elts if not (isinstance(e, ast.Constant) and e.value is Ellipsis)]
        return base
    return TypeSpec("any")


def signature(code: str, entry_point: str) -> list[Param]:
    try:
        tree = parse_source(code)
    except SyntaxError as e:
        raise NotFuzzable("the code does not parse") from e
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.name == entry_point), None)
    if fn is None:
        raise NotFuzzable(f"no top-level function {entry_point}")
    if isinstance(fn, ast.AsyncFunctionDef):
        raise NotFuzzable("async functions are not fuzzed")
    args = fn.args.posonlyargs + fn.args.args
    defaults: list[Any] = [_MISSING] * (len(args) - len(fn.args.defaults))
    for d in fn.args.defaults:
        try:
            defaults.append(ast.literal_eval(d))
        except ValueError:
            defaults.append(_MISSING)
    return [Param(a.arg, _spec(a.annotation), d) for a, d in zip(args, defaults, strict=True)]


def example_calls(test_source: str, arity: int) -> list[list[Any]]:
    """Literal positional arguments of `candidate(...)` calls in the tests, in source order. An
    argument that is the variable of a `for x in (<literals>)` loop yields one example per value;
    other non-literal arguments are left missing, so only those positions are generated."""
    try:
        tree = parse_source(test_source)
    except SyntaxError:
        return []
    loop_values: dict[str, list[Any]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            try:
                values = ast.literal_eval(node.iter)
            except ValueError:
                continue
            if isinstance(values, (list, tuple)):
                loop_values[node.target.id] = list(values)[:20]
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id == "candidate"), key=lambda n: (n.lineno, n.col_offset))
    out: list[list[Any]] = []
    for node in calls:
        rows: list[list[Any]] = [[]]
        for a in node.args[:arity]:
            if isinstance(a, ast.Name) and a.id in loop_values:
                options = loop_values[a.id]
            else:
                try:
                    options = [ast.literal_eval(a)]
                except ValueError:
                    options = [_MISSING]
            rows = [r + [v] for r in rows for v in options][:20]
        for row in rows:
            if row and any(v is not _MISSING for v in row):
                out.append(row + [_MISSING] * (arity - len(row)))
    return out


# -- values -----------------------------------------------------------------------------------

def _base(spec: TypeSpec, rng: random.Random) -> Any:
    k = spec.kind
    if k == "int":
        return rng.randint(-10, 10)
    if k == "float":
        return rng.uniform(-10, 10)
    if k == "bool":
        return rng.random() < 0.5
    if k == "bytes":
        return b"data"
    if k == "none":
        return None
    if k in ("list", "tuple"):
        elem = spec.args[0] if spec.args else TypeSpec("any")
        return [_base(elem, rng) for _ in range(rng.randint(0, 3))]
    if k == "dict":
        val = spec.args[1] if len(spec.args) > 1 else TypeSpec("any")
        return {"key": _base(val, rng)}
    if k == "any":
        return rng.choice([0, "text", [1, 2], {"a": 1}, None])
    return "text"


def _mutate(value: Any, spec: TypeSpec, rng: random.Random, depth: int = 0) -> Any:
    if spec.optional and rng.random() < 0.05:
        return None
    if isinstance(value, bool):
        return not value if rng.random() < 0.7 else rng.randint(-1, 2)
    if isinstance(value, int):
        return rng.choice(_INT_EDGES) if rng.random() < 0.25 else value + rng.randint(-1000, 1000)
    if isinstance(value, float):
        return rng.choice([0.0, -0.0, 1e308, -1e-308, float("inf")]) if rng.random() < 0.2 \
            else value + rng.uniform(-1000, 1000)
    if isinstance(value, str):
        return _edit_text(value, rng)
    if isinstance(value, bytes):
        return _edit_text(value.decode("latin-1"), rng).encode("utf-8", "surrogatepass")
    if isinstance(value, list) and depth < 3:
        elem = spec.args[0] if spec.args else TypeSpec("any")
        out = list(value)
        op = rng.random()
        if out and op < 0.35:
            i = rng.randrange(len(out))
            out[i] = _mutate(out[i], elem, rng, depth + 1)
        elif out and op < 0.55:
            out.pop(rng.randrange(len(out)))
        elif op < 0.9:
            out.insert(rng.randint(0, len(out)), _mutate(rng.choice(out), elem, rng, depth + 1) if out
                       else _base(elem, rng))
        else:
            out = out * rng.randint(2, 50)
        return out
    if isinstance(value, dict) and depth < 3:
        val_spec = spec.args[1] if len(spec.args) > 1 else TypeSpec("any")
        out_d = dict(value)
        op = rng.random()
        if out_d and op < 0.4:
            k = rng.choice(list(out_d))
            out_d[k] = _mutate(out_d[k], val_spec, rng, depth + 1)
        elif out_d and op < 0.6:
            out_d.pop(rng.choice(list(out_d)))
        else:
            out_d[_edit_text(rng.choice(list(out_d) or ["key"]), rng)] = _base(val_spec, rng)
        return out_d
    if value is None:
        return _base(spec if spec.kind != "none" else TypeSpec("any"), rng)
    return value


def _edit_text(text: str, rng: random.Random) -> str:
    op = rng.random()
    chars = list(text)
    if op < 0.2:
        chars.insert(rng.randint(0, len(chars)), rng.choice(_STR_POOL))
    elif op < 0.3 and chars:
        chars.pop(rng.randrange(len(chars)))
    elif op < 0.45 and chars:
        chars[rng.randrange(len(chars))] = rng.choice(_STR_POOL)
    elif op < 0.65:
        i = rng.randint(0, len(chars))
        chars[i:i] = list(rng.choice(_FRAGMENTS))
    elif op < 0.8 and chars:
        # A run of one character: the shape of input that makes nested quantifiers backtrack.
        i = rng.randrange(len(chars))
        chars[i:i] = [chars[i]] * rng.randint(8, 40)
    elif op < 0.95:
        return text * rng.randint(2, 200) if text else "x" * rng.randint(100, 5000)
    else:
        return ""
    return "".join(chars)


def _clip(value: Any) -> Any:
    if isinstance(value, (str, bytes)):
        return value[:MAX_TEXT]
    if isinstance(value, list):
        return [_clip(v) for v in value[:MAX_ITEMS]]
    if isinstance(value, dict):
        return {k: _clip(v) for k, v in list(value.items())[:MAX_ITEMS]}
    return value


def generate_inputs(params: Sequence[Param], examples: Sequence[Sequence[Any]], *, n: int = DEFAULT_ITERATIONS,
                    seed: int = 0) -> list[list[Any]]:
    """`n` argument lists: each starts from an example call (or defaults/base values) and mutates
    non-fixed parameters, AutoSafeCoder style."""
    rng = random.Random(seed)
    usable = [list(e) for e in examples if len(e) == len(params)]
    for p_i, p in enumerate(params):
        if not any(e[p_i] is not _MISSING for e in usable) and p.default is _MISSING:
            # Without an example, an unannotated parameter is as likely an object as a value:
            # random values would only produce type-confusion noise.
            if p.fixed or p.spec.kind in ("object", "any"):
                raise NotFuzzable(f"no example value for parameter `{p.name}`")
    mutable = [i for i, p in enumerate(params) if not p.fixed]
    if not mutable:
        raise NotFuzzable("no parameter to mutate")
    inputs: list[list[Any]] = []
    for _ in range(n):
        row = list(rng.choice(usable)) if usable else [_MISSING] * len(params)
        for i, p in enumerate(params):
            if row[i] is _MISSING:
                same = [e[i] for e in usable if e[i] is not _MISSING]
                row[i] = rng.choice(same) if same else (p.default if p.default is not _MISSING
                                                         else _base(p.spec, rng))
        # Mostly one mutation, sometimes two or three stacked (a long run AND an odd character is
        # what makes a regex backtrack).
        for _ in range(1 + (rng.random() < 0.5) + (rng.random() < 0.25)):
            target = rng.choice(mutable)
            row[target] = _clip(_mutate(row[target], params[target].spec, rng))
        inputs.append(row)
    return inputs


def encode(value: Any) -> Any:
    """JSON-safe form of an argument (bytes travel as {"__bytes__": base64})."""
    if isinstance(value, (bytes, bytearray)):
        return {"__bytes__": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    return value


@dataclass
class FuzzPlan:
    """`calibration`: the unmutated example calls, run first to measure the function's normal CPU
    cost (a deliberately slow function, such as a password KDF, must not look hung). `expected`:
    exception class names that count as deliberate rejections."""

    inputs: list[list[Any]]
    calibration: list[list[Any]]
    expected: list[str]


# Rejections of bad input by the function or the runtime (out-of-range ints, a failing external
# tool), not crashes.
BASE_EXPECTED = ("ValueError", "TypeError", "KeyError", "OSError", "OverflowError", "SubprocessError")
_DOCUMENTED = re.compile(r"\b([A-Z][A-Za-z]*(?:Error|Exception))\b")


def documented_exceptions(text: str) -> list[str]:
    """Exception names the task text tells the function to raise (e.g. "raise `LookupError`")."""
    return sorted(set(_DOCUMENTED.findall(text)))


def plan(code: str, entry_point: str, functional_tests: str, task_text: str = "", *,
         n: int = DEFAULT_ITERATIONS, seed: int = 0) -> FuzzPlan:
    params = signature(code, entry_point)
    if not params:
        raise NotFuzzable("the function takes no arguments")
    examples = example_calls(functional_tests, len(params))
    inputs = generate_inputs(params, examples, n=n, seed=seed)
    complete = [e for e in examples if all(v is not _MISSING for v in e)][:10]
    expected = sorted(set(BASE_EXPECTED) | set(documented_exceptions(task_text)))
    return FuzzPlan([encode(r) for r in inputs], [encode(r) for r in complete], expected)


_SOLUTION_LINE = re.compile(r"solution line (\d+)")


def findings(result: RunResult, inputs: Sequence[Sequence[Any]]) -> list[Finding]:
    """Deduplicated crash and timeout findings of a fuzz run."""
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    events = list(result.fuzz_events)
    if result.status == "timeout" and result.last_started and result.last_started.startswith("fuzz-"):
        events.append({"kind": "timeout", "input": int(result.last_started.split("-", 1)[1]),
                       "msg": "the run hit the sandbox time limit"})
    elif result.status == "crashed" and result.last_started and result.last_started.startswith("fuzz-"):
        events.append({"kind": "crash", "exc": "process died", "input": int(result.last_started.split("-", 1)[1]),
                       "msg": f"the process died (exit {result.exit_code})"})
    for ev in events:
        kind = str(ev.get("kind"))
        where = _SOLUTION_LINE.search(str(ev.get("msg", "")))
        line = int(where.group(1)) if where else 0
        key = (kind, str(ev.get("exc", "")) + f"@{line}")
        if key in seen:
            continue
        seen.add(key)
        idx = int(ev.get("input", -1))
        shown = repr(inputs[idx])[:200] if 0 <= idx < len(inputs) else "?"
        if kind == "timeout":
            msg = f"call used more CPU time than the per-call limit (or hung) for input {shown}"
            out.append(Finding("fuzz", "timeout", "CWE-400", "MEDIUM", line, msg))
        else:
            msg = f"uncaught {ev.get('msg', '')} for input {shown}"
            out.append(Finding("fuzz", "crash", "CWE-248", "MEDIUM", line, msg))
        if len(out) >= MAX_FINDINGS:
            break
    return out
