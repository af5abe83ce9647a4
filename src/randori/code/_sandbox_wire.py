"""Plain data across the sandbox boundary (standard library only: runs inside the sandbox).

The tests (the judge) and the code under test (the candidate) live in different processes. Every
value that crosses between them is turned into JSON by the sender and rebuilt by the receiver from
that JSON alone, so the receiver only ever holds objects of its own making: str, bytes, numbers,
bool, None, lists, tuples, dicts, sets, a few standard value types (dates, decimals, paths, TLS
settings), exceptions rebuilt as their builtin class, and two stand-ins made here: `Opaque` for any
other object (equal only to itself, no truth value) and `RemoteCallable` for a function the
candidate returned. An object with a permissive `__eq__`, `__hash__` or `__bool__` therefore never
takes part in a comparison on the judge's side: what the candidate's encoder writes is data, and
the decoder builds nothing else.

Messages are length-prefixed (4 bytes, big-endian). A receiver refuses a message above its cap
without reading it, so a flooding sender costs nothing but a failed call.
"""

from __future__ import annotations

import base64
import builtins
import json
import os
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MAX_DEPTH = 100
MESSAGE_CAP = 8 * 1024 * 1024
TEXT_CAP = 2000
_HEADER = struct.Struct(">I")


class WireError(Exception):
    """A message that is too large, malformed, or never came."""


class PeerGone(BaseException):
    """The code under test exited or closed its end. A BaseException, so that `except Exception`
    in a test cannot swallow it and go on as if the call had returned."""


def cap_text(text: str, limit: int = TEXT_CAP) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f" [... {len(text) - limit} characters cut]"


# -- framing ------------------------------------------------------------------------------------

def send(fd: int, obj: Any, cap: int = 0xFFFFFFFF) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode("utf-8", "surrogatepass")
    if len(data) > cap:
        raise WireError(f"the value is {len(data)} bytes as data, above the {cap}-byte limit of the sandbox channel")
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        try:
            n = os.write(fd, view)
        except BrokenPipeError as e:
            raise PeerGone("the other side closed the channel") from e
        view = view[n:]


def _read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise PeerGone("the other side closed the channel")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv(fd: int, cap: int = MESSAGE_CAP) -> Any:
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    if size > cap:
        raise WireError(f"a message of {size} bytes exceeds the {cap}-byte limit")
    try:
        return json.loads(_read_exact(fd, size).decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as e:
        raise WireError(f"malformed message: {type(e).__name__}") from e


# -- encoding (sender side; may run in the candidate's process, so it proves nothing) -----------

_PLAIN_SUBCLASS_BASES = (bool, int, float, complex, str, bytes, bytearray, tuple, list, dict, frozenset, set)


class Encoder:
    """Objects -> JSON-able data. `handles` keeps callables the receiver may call back."""

    def __init__(self, handles: list[Any] | None = None):
        self.handles = handles

    def __call__(self, v: Any, depth: int = 0) -> Any:
        t = type(v)
        if v is None or t is bool or t is str:
            return v
        if t is int:
            return v if -(1 << 63) <= v < (1 << 63) else {"$": "int", "v": format(v, "x")}
        if t is float:
            return v if v == v and v not in (float("inf"), float("-inf")) else {"$": "float", "v": repr(v)}
        if depth > MAX_DEPTH:
            return self._opaque(v, "nested too deeply")
        d = depth + 1
        if t is list:
            return [self(x, d) for x in v]
        if t is tuple:
            return {"$": "tuple", "v": [self(x, d) for x in v]}
        if t is dict:
            return {"$": "dict", "v": [[self(k, d), self(x, d)] for k, x in v.items()]}
        if t is set or t is frozenset:
            return {"$": t.__name__, "v": [self(x, d) for x in v]}
        if t is bytes or t is bytearray:
            return {"$": t.__name__, "v": base64.b64encode(v).decode("ascii")}
        if t is complex:
            return {"$": "complex", "v": [v.real, v.imag]}
        special = self._special(v, d)
        if special is not None:
            return special
        for base in _PLAIN_SUBCLASS_BASES:
            if isinstance(v, base):
                # A namedtuple crosses as a tuple, an OrderedDict as a dict, an IntEnum as an int.
                return self(_as_base(base, v), depth)
        if callable(v) and self.handles is not None:
            self.handles.append(v)
            return {"$": "callable", "id": len(self.handles) - 1, "name": _type_name(v, own=True)}
        return self._opaque(v)

    def _special(self, v: Any, depth: int) -> Any:
        mod = type(v).__module__
        name = type(v).__name__
        if mod == "datetime" and name in ("datetime", "date", "time"):
            return {"$": name, "v": v.isoformat()}
        if mod == "datetime" and name == "timedelta":
            return {"$": "timedelta", "v": [v.days, v.seconds, v.microseconds]}
        if mod == "decimal" and name == "Decimal":
            return {"$": "Decimal", "v": str(v)}
        if mod == "fractions" and name == "Fraction":
            return {"$": "Fraction", "v": [self(v.numerator, depth), self(v.denominator, depth)]}
        if mod == "uuid" and name == "UUID":
            return {"$": "UUID", "v": str(v)}
        if mod.startswith("pathlib") and "Path" in name:
            return {"$": "Path", "v": str(v)}
        if mod == "ssl" and name == "SSLContext":
            fields = ("protocol", "verify_mode", "minimum_version", "maximum_version", "options", "verify_flags")
            return {"$": "SSLContext", "v": {**{f: int(getattr(v, f)) for f in fields},
                                             "check_hostname": bool(v.check_hostname)}}
        enum = sys.modules.get("enum")
        if enum is not None and isinstance(v, enum.Enum) and not isinstance(v, _PLAIN_SUBCLASS_BASES):
            return self(v.value, depth)
        return None

    def _opaque(self, v: Any, why: str = "") -> Any:
        try:
            text = repr(v)
        except BaseException:
            text = "<unprintable>"
        if type(text) is not str:
            text = "<unprintable>"
        return {"$": "object", "type": _type_name(v), "repr": cap_text(text, 200), "why": why}


def _as_base(base: type, v: Any) -> Any:
    if base in (bool, int):
        return int.__index__(v)
    if base is float:
        return float.__float__(v)
    if base is complex:
        return complex(v.real, v.imag)
    if base is str:
        return str.__str__(v)
    if base is bytes:
        return b"" + v  # an exact bytes copy, whatever the subclass's __bytes__ says
    return base(v)


def _type_name(v: Any, own: bool = False) -> str:
    t = v if own and isinstance(v, type) else type(v)
    name = getattr(v, "__qualname__", None) if own else None
    if type(name) is not str:
        name = f"{getattr(t, '__module__', '?')}.{getattr(t, '__qualname__', '?')}"
    return cap_text(name, 200)


def encode_exception(e: BaseException, where: str = "") -> dict:
    """An exception as data: its class name, the names of its classes (to find a builtin base on
    the other side), its arguments when they are plain, and its message."""
    mro = [c.__name__ for c in type(e).__mro__ if isinstance(c.__name__, str)][:20]
    try:
        message = str(e)
    except BaseException:
        message = "<unprintable message>"
    if type(message) is not str:
        message = "<unprintable message>"
    enc = Encoder()
    try:
        args = [enc(a) for a in e.args] if isinstance(e.args, tuple) and len(e.args) <= 8 else None
        size = len(json.dumps(args)) if args is not None else 0
    except BaseException:
        args, size = None, 0
    if size > 4 * TEXT_CAP:
        args = None
    return {"$": "exception", "type": cap_text(type(e).__name__, 100), "module": cap_text(type(e).__module__, 100),
            "qualname": cap_text(type(e).__qualname__, 200), "mro": mro, "args": args, "message": cap_text(message),
            "where": cap_text(where, 300)}


# -- decoding (receiver side: builds only objects of its own) -----------------------------------

class Opaque:
    """Stands for an object that cannot cross as data. Equal only to itself; it has no truth
    value, so `assert result` cannot be satisfied by an object of unknown meaning."""

    __slots__ = ("type_name", "text")

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return f"<{self.type_name} object from the code under test: {self.text}>"

    def __bool__(self) -> bool:
        raise TypeError(f"the code under test returned a {self.type_name} object, which has no meaning outside "
                        "its process: only plain data (str, bytes, numbers, bool, None, lists, tuples, dicts) "
                        "crosses the sandbox boundary")


class RemoteCallable:
    """A function the code under test returned; calling it calls it there, with plain data."""

    __slots__ = ("_call", "_id", "name")

    def __init__(self, call: Callable[..., Any], handle: int, name: str):
        self._call, self._id, self.name = call, handle, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(self._id, args, kwargs)

    def __repr__(self) -> str:
        return f"<function {self.name} of the code under test>"


_EXC_CLASSES: dict[tuple[str, str, str], type] = {}


def _builtin_exception(name: str) -> type | None:
    cls = getattr(builtins, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None


def _library_exception(module: str, qualname: str) -> type | None:
    """The receiver's own class of that name, from a library the receiver has already imported
    (tests catch `jwt.InvalidSignatureError` raised by the code). Never imports anything."""
    mod = sys.modules.get(module)
    if mod is None or module in ("solution", "__main__") or module.startswith("_sandbox"):
        return None
    obj: Any = mod
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None


def decode_exception(d: dict) -> BaseException:
    name, module, message = str(d.get("type", "Exception")), str(d.get("module", "")), str(d.get("message", ""))
    mro = [str(n) for n in d.get("mro") or [] if isinstance(n, str)]
    base = next((c for c in map(_builtin_exception, mro or [name]) if c is not None), Exception)
    library = _library_exception(module, str(d.get("qualname", name))) if module != "builtins" else None
    cls: type
    if module == "builtins" and base.__name__ == name:
        cls = base
    elif library is not None:
        cls = library
    else:
        # A class of the candidate's own: rebuilt here under its name, on its nearest builtin base.
        key = (module, name, base.__name__)
        made = _EXC_CLASSES.get(key)
        if made is None:
            made = type(name, (base,), {"__module__": module or "solution", "__str__": lambda self: self.message_text})
            _EXC_CLASSES[key] = made
        cls = made
    args = d.get("args")
    try:
        exc = cls(*decode(args)) if isinstance(args, list) else cls(message)
    except Exception:
        try:
            exc = cls(message)
        except Exception:  # a library class whose constructor wants other arguments
            exc = BaseException.__new__(cls)
            BaseException.__init__(exc, message)
    try:
        exc.message_text = message  # type: ignore[attr-defined]
        exc.where = str(d.get("where", ""))  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        pass
    return exc


def decode(v: Any, remote: Callable[..., Any] | None = None, depth: int = 0) -> Any:
    t = type(v)
    if v is None or t in (bool, str, int, float):
        return v
    if depth > MAX_DEPTH + 2:
        raise WireError("value nested too deeply")
    d = depth + 1
    if t is list:
        return [decode(x, remote, d) for x in v]
    if t is not dict:
        raise WireError(f"unexpected {t.__name__} in a message")
    tag = v.get("$")
    x = v.get("v")
    if tag == "tuple":
        return tuple(decode(i, remote, d) for i in _list(x))
    if tag == "dict":
        out = {}
        for pair in _list(x):
            if type(pair) is not list or len(pair) != 2:
                raise WireError("malformed dict item")
            out[_hashable(decode(pair[0], remote, d))] = decode(pair[1], remote, d)
        return out
    if tag in ("set", "frozenset"):
        items = [_hashable(decode(i, remote, d)) for i in _list(x)]
        return set(items) if tag == "set" else frozenset(items)
    if tag in ("bytes", "bytearray"):
        raw = base64.b64decode(_str(x), validate=True)
        return raw if tag == "bytes" else bytearray(raw)
    if tag == "int":
        return int(_str(x), 16)
    if tag == "float":
        return float(_str(x))
    if tag == "complex":
        re_im = _list(x)
        return complex(float(re_im[0]), float(re_im[1]))
    if tag == "exception":
        return decode_exception(v)
    if tag == "object":
        return Opaque(_str(v.get("type", "?")), _str(v.get("repr", "")))
    if tag == "callable":
        if remote is None:
            return Opaque(_str(v.get("name", "function")), "a function")
        return RemoteCallable(remote, int(v.get("id", -1)), _str(v.get("name", "function")))
    return _decode_value_type(tag, x, remote, d)


def _decode_value_type(tag: Any, x: Any, remote: Any, depth: int) -> Any:
    if tag in ("datetime", "date", "time"):
        import datetime

        return getattr(datetime, tag).fromisoformat(_str(x))
    if tag == "timedelta":
        import datetime

        days, seconds, micro = (int(i) for i in _list(x))
        return datetime.timedelta(days=days, seconds=seconds, microseconds=micro)
    if tag == "Decimal":
        import decimal

        return decimal.Decimal(_str(x))
    if tag == "Fraction":
        import fractions

        num, den = _list(x)
        return fractions.Fraction(decode(num, remote, depth), decode(den, remote, depth))
    if tag == "UUID":
        import uuid

        return uuid.UUID(_str(x))
    if tag == "Path":
        import pathlib

        return pathlib.Path(_str(x))
    if tag == "SSLContext":
        return _ssl_context(x)
    raise WireError(f"unknown value type {str(tag)[:40]!r}")


def _ssl_context(x: Any) -> Any:
    """A context of the judge's own with the settings the candidate's context had."""
    import ssl

    if type(x) is not dict:
        raise WireError("malformed SSLContext")
    ctx = ssl.SSLContext(ssl._SSLMethod(int(x["protocol"])))
    ctx.check_hostname = False
    ctx.verify_mode = ssl.VerifyMode(int(x["verify_mode"]))
    ctx.check_hostname = bool(x["check_hostname"])
    for attr in ("minimum_version", "maximum_version"):
        try:
            setattr(ctx, attr, ssl.TLSVersion(int(x[attr])))
        except (ValueError, OSError):
            pass
    ctx.options = ssl.Options(int(x["options"]))
    ctx.verify_flags = ssl.VerifyFlags(int(x["verify_flags"]))
    return ctx


def _list(x: Any) -> list:
    if type(x) is not list:
        raise WireError("malformed message")
    return x


def _str(x: Any) -> str:
    if type(x) is not str:
        raise WireError("malformed message")
    return x


def _hashable(x: Any) -> Any:
    try:
        hash(x)
    except TypeError as e:
        raise WireError("unhashable key") from e
    return x
