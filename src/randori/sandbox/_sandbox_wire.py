"""Plain data across the sandbox boundary (standard library only: runs inside the sandbox).

The tests (the judge) and the code under test (the candidate) live in different processes. Every
value that crosses between them is turned into JSON by the sender and rebuilt by the receiver from
that JSON alone, so the receiver only ever holds objects of its own making: str, bytes, numbers,
bool, None, lists, tuples, dicts, sets, a few standard value types (dates, decimals, paths, TLS
settings), exceptions rebuilt as their builtin class, and stand-ins made here.

Any other object of the candidate's (a function, a Flask app, its test client, a response) reaches
the judge as a `RemoteObject`: a proxy whose attribute reads, calls, item access, iteration,
`with` and `str()` are requests that cross as data and whose answers are decoded the same way, so
a response's `status_code` arrives as a plain int and every comparison is made in the judge on
plain values. A proxy is equal only to itself and has no truth value, so an object with a
permissive `__eq__`, `__hash__` or `__bool__` never takes part in a comparison: what the
candidate's encoder writes is data, and the decoder builds nothing else. A dict read as an
attribute (a Flask app's `config`, a session) arrives as a `RemoteDict`: a plain dict copy whose
writes are also sent back. A proxy handed back to the candidate arrives there as the original
object. An object or function the tests made themselves reaches the candidate as a record of its
attributes, its functions as callbacks the judge runs; a library object of the judge's (a
`BytesIO`) as a pickle the candidate unpickles (only ever on its side); anything else as `Opaque`.

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
    """Objects -> JSON-able data. With `handles` (the candidate's side), objects that are not plain
    data are kept there and sent as references the receiver reaches through a proxy."""

    def __init__(self, handles: list[Any] | None = None, callbacks: list[Any] | None = None):
        self.handles = handles
        # The judge's side: functions of the tests' own the candidate may call back.
        self.callbacks = callbacks

    def with_ref(self, v: Any) -> Any:
        """A dict also sent as a reference, so the receiver's writes reach the original."""
        data = self(v)
        if self.handles is not None and isinstance(v, dict) and type(data) is dict and data.get("$") == "dict":
            self.handles.append(v)
            data["ref"] = len(self.handles) - 1
        return data

    def __call__(self, v: Any, depth: int = 0) -> Any:
        t = type(v)
        if v is None or t is bool or t is str:
            return v
        if t is RemoteObject or t is RemoteDict:
            return {"$": "handle", "id": v._ref}
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
        if self.handles is not None:
            return self._ref(v)
        if self.callbacks is not None:
            if _of_tests(v):
                return self._record(v, d)
            return self._pickled(v)
        return self._opaque(v)

    def _pickled(self, v: Any) -> Any:
        """A library object of the judge's (a `BytesIO`, a request object) for the candidate, which
        unpickles its own copy: pickle runs there, never here, so it can only affect the code."""
        import pickle

        v = _file_contents(v)
        try:
            data = pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return self._opaque(v, "cannot be copied to the code's process")
        if len(data) > MESSAGE_CAP // 2:
            return self._opaque(v, "too large to copy to the code's process")
        return {"$": "pickled", "type": _type_name(v), "v": base64.b64encode(data).decode("ascii")}

    def _record(self, v: Any, depth: int) -> Any:
        """An object or function the tests made, sent as what it holds: plain attributes as data,
        its functions as callbacks into the judge (which runs them, as test code, on plain data)."""
        assert self.callbacks is not None
        if callable(v) and not isinstance(v, type):
            self.callbacks.append(v)
            return {"$": "callback", "id": len(self.callbacks) - 1, "name": _type_name(v, own=True)}
        attrs: dict[str, Any] = {}
        for klass in reversed(type(v).__mro__[:-1]):
            attrs.update({k: getattr(v, k) for k in vars(klass) if not k.startswith("__")})
        attrs.update({k: x for k, x in getattr(v, "__dict__", {}).items() if not k.startswith("__")})
        return {"$": "record", "class": cap_text(type(v).__name__, 100),
                "v": [[k, self(x, depth)] for k, x in attrs.items()]}

    def _ref(self, v: Any) -> Any:
        assert self.handles is not None
        self.handles.append(v)
        t = type(v)
        module, qualname = getattr(t, "__module__", "?"), getattr(t, "__qualname__", "?")
        mro = [[c.__module__, c.__qualname__] for c in t.__mro__[:12]
               if type(getattr(c, "__module__", None)) is str and type(getattr(c, "__qualname__", None)) is str]
        return {"$": "ref", "id": len(self.handles) - 1, "callable": callable(v),
                "module": module if type(module) is str else "?",
                "qualname": qualname if type(qualname) is str else "?", "mro": mro, "repr": self._opaque(v)["repr"]}

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
        if mod == "lxml.etree" and name == "_Element":
            return _xml_element(v)
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


def _file_contents(v: Any) -> Any:
    """A file the tests opened for reading (to upload it, say) as an in-memory copy of what is left
    to read in it, which the code's process can hold; anything else as it is."""
    import io

    if isinstance(v, (io.BufferedReader, io.FileIO)) and "r" in str(getattr(v, "mode", "")) and v.readable():
        return io.BytesIO(v.read(MESSAGE_CAP // 2 + 1))
    if isinstance(v, io.TextIOWrapper) and "r" in str(v.mode) and v.readable():
        return io.StringIO(v.read(MESSAGE_CAP // 2 + 1))
    return v


def _of_tests(v: Any) -> bool:
    """Made by the tests' own code (their namespace is the module `tests`)."""
    if isinstance(v, type):
        return False
    owner = getattr(v, "__func__", v) if callable(v) else type(v)
    return getattr(owner, "__module__", None) == "tests"


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


class RemoteObject:
    """An object of the code under test, reached through `peer` (the judge's end of the channel).

    Every operation is a request; every answer is decoded from data. Equal only to itself, no
    truth value. `isinstance` sees the judge's own class of the same name from a library the
    judge has imported (a `flask.Response`), never a builtin one."""

    __slots__ = ("_peer", "_ref", "_module", "_qualname", "_text", "_callable", "_mro", "__weakref__")

    def __init__(self, peer: Any, ref: int, module: str, qualname: str, text: str, is_callable: bool,
                 mro: tuple[tuple[str, str], ...] = ()):
        for k, v in (("_peer", peer), ("_ref", ref), ("_module", module), ("_qualname", qualname), ("_text", text),
                     ("_callable", is_callable), ("_mro", mro or ((module, qualname),))):
            object.__setattr__(self, k, v)

    def _op(self, name: str, *args: Any) -> Any:
        return self._peer.remote({"op": "special", "handle": self._ref, "name": name}, args)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # protocol probes (copy, pickle, numpy) are not the code's attributes
        return self._peer.remote({"op": "getattr", "handle": self._ref, "name": name}, ())

    def __setattr__(self, name: str, value: Any) -> None:
        self._peer.remote({"op": "setattr", "handle": self._ref, "name": name}, (value,))

    def __delattr__(self, name: str) -> None:
        self._op("delattr", name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._peer.remote({"op": "call", "handle": self._ref}, args, kwargs)

    def __getitem__(self, key: Any) -> Any:
        return self._op("getitem", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._op("setitem", key, value)

    def __delitem__(self, key: Any) -> None:
        self._op("delitem", key)

    def __len__(self) -> int:
        n = self._op("len")
        if type(n) is not int:
            raise TypeError("len() of an object of the code under test gave no int")
        return n

    def __iter__(self) -> Any:
        items = self._op("iter")
        if type(items) is not list:
            raise TypeError("iterating an object of the code under test gave no items")
        return iter(items)

    def __contains__(self, item: Any) -> bool:
        return self._op("contains", item) is True

    def __enter__(self) -> Any:
        return self._op("enter")

    def __exit__(self, *exc: Any) -> None:
        self._op("exit", len(exc) > 1 and exc[1] is not None)
        # None: the code under test never decides that a test's exception did not happen

    def __str__(self) -> str:
        text = self._op("str")
        return text if type(text) is str else self._text

    def __repr__(self) -> str:
        return f"<{self._module}.{self._qualname} object from the code under test: {self._text}>"

    def __bool__(self) -> bool:
        raise TypeError(f"{self!r} has no truth value here: compare its plain attributes or results instead")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return id(self)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return _class_for(self._mro)


class RemoteDict(dict):
    """A copy of a dict of the code under test (a Flask config, a session); writes go to both."""

    def __init__(self, items: dict, peer: Any, ref: int):
        super().__init__(items)
        self._peer, self._ref = peer, ref

    def _send(self, name: str, *args: Any) -> None:
        self._peer.remote({"op": "special", "handle": self._ref, "name": name}, args)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._send("setitem", key, value)
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        self._send("delitem", key)
        super().__delitem__(key)

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: Any, *default: Any) -> Any:
        if key in self:
            value = self[key]
            del self[key]
            return value
        if default:
            return default[0]
        raise KeyError(key)

    def clear(self) -> None:
        for key in list(self):
            del self[key]


_CLASSES: dict[tuple[tuple[str, str], ...], type] = {}


def _class_for(mro: tuple[tuple[str, str], ...]) -> type:
    """A class of the judge's for `isinstance` on a proxy: the judge's own classes named in the
    object's class hierarchy (a Flask test response is both werkzeug's TestResponse and Flask's
    Response), or RemoteObject when the judge knows none of them."""
    made = _CLASSES.get(mro)
    if made is None:
        bases: list[type] = []
        for module, qualname in mro:
            cls = _library_class(module, qualname)
            if cls is not None and not any(issubclass(b, cls) for b in bases):
                bases.append(cls)
        try:
            made = bases[0] if len(bases) == 1 else type(mro[0][1].rsplit(".", 1)[-1], tuple(bases), {}) \
                if bases else RemoteObject
        except TypeError:  # no consistent order for these bases: the most specific one will do
            made = bases[0]
        _CLASSES[mro] = made
    return made


def _library_class(module: str, qualname: str) -> type | None:
    """The judge's own class of that name, from a library it has already imported; never a
    builtin one (the candidate names its type itself, so it may claim any name)."""
    mod = sys.modules.get(module)
    if mod is None or module in ("builtins", "solution", "__main__", "tests") or module.startswith("_sandbox"):
        return None
    obj: Any = mod
    for part in qualname.split("."):
        if not part.isidentifier() or part.startswith("_"):
            return None  # only public names: nothing a module computes on request for odd names
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) and not issubclass(obj, _PLAIN_SUBCLASS_BASES) else None


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


def decode(v: Any, remote: Any = None, depth: int = 0, local: list[Any] | None = None,
           callback: Any = None) -> Any:
    """Data -> objects of the receiver's making. `remote`: the judge's peer (references become
    proxies through it); `local`: the candidate's handles (references it made come back as the
    objects themselves); `callback`: the candidate's maker of functions that call the judge back."""
    return _decode(v, remote, depth, local, callback)


def _decode(v: Any, remote: Any, depth: int, local: list[Any] | None, callback: Any = None) -> Any:
    t = type(v)
    if v is None or t in (bool, str, int, float):
        return v
    if depth > MAX_DEPTH + 2:
        raise WireError("value nested too deeply")
    d = depth + 1
    if t is list:
        return [_decode(x, remote, d, local, callback) for x in v]
    if t is not dict:
        raise WireError(f"unexpected {t.__name__} in a message")
    tag = v.get("$")
    x = v.get("v")
    if tag == "tuple":
        return tuple(_decode(i, remote, d, local, callback) for i in _list(x))
    if tag == "dict":
        out = {}
        for pair in _list(x):
            if type(pair) is not list or len(pair) != 2:
                raise WireError("malformed dict item")
            out[_hashable(_decode(pair[0], remote, d, local, callback))] = _decode(pair[1], remote, d, local, callback)
        ref = v.get("ref")
        if remote is not None and type(ref) is int:
            return RemoteDict(out, remote, ref)
        return out
    if tag in ("set", "frozenset"):
        items = [_hashable(_decode(i, remote, d, local, callback)) for i in _list(x)]
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
    if tag == "ref":
        module, qualname, text = _str(v.get("module", "?")), _str(v.get("qualname", "?")), _str(v.get("repr", ""))
        if remote is None:
            return Opaque(f"{module}.{qualname}", text)
        ref = v.get("id")
        if type(ref) is not int:
            raise WireError("malformed reference")
        mro = tuple((_str(m), _str(q)) for m, q in map(_pair, _list(v.get("mro") or [])[:12]))
        return RemoteObject(remote, ref, module, qualname, text, v.get("callable") is True, mro)
    if tag == "record":
        if callback is None:
            return Opaque(_str(v.get("class", "?")), "an object of the tests")
        return _rebuild(_str(v.get("class", "object")), {_str(k): _decode(x, remote, d, local, callback)
                                                         for k, x in map(_pair, _list(x))})
    if tag == "callback":
        ref = v.get("id")
        if callback is None or type(ref) is not int:
            return Opaque(_str(v.get("name", "function")), "a function of the tests")
        return callback(ref, _str(v.get("name", "function")))
    if tag == "pickled":
        if local is None:  # only the candidate's side unpickles: never what the code sent
            raise WireError("unexpected pickled value")
        import pickle

        try:
            return pickle.loads(base64.b64decode(_str(x), validate=True))
        except Exception:
            return Opaque(_str(v.get("type", "?")), "an object of the tests that could not be copied here")
    if tag == "handle":
        ref = v.get("id")
        if local is None or type(ref) is not int or not 0 <= ref < len(local):
            raise WireError("unknown reference")
        return local[ref]
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
        return fractions.Fraction(_decode(num, None, depth, None), _decode(den, None, depth, None))
    if tag == "UUID":
        import uuid

        return uuid.UUID(_str(x))
    if tag == "Path":
        import pathlib

        return pathlib.Path(_str(x))
    if tag == "SSLContext":
        return _ssl_context(x)
    if tag == "XMLElement":
        return _xml_from_text(x)
    raise WireError(f"unknown value type {str(tag)[:40]!r}")


def _xml_element(v: Any) -> Any:
    """An lxml element as its XML text: the root of a document with its DOCTYPE (declared entities
    stay references), any other element alone. The receiver parses its own copy."""
    etree = sys.modules.get("lxml.etree")
    if etree is None or type(v) is not etree._Element:
        return None
    tree = v.getroottree()
    text = etree.tostring(tree if tree.getroot() is v else v)
    if len(text) > MESSAGE_CAP // 2:
        return {"$": "object", "type": "lxml.etree._Element", "repr": "<an XML element too large to copy>",
                "why": "too large to copy"}
    return {"$": "XMLElement", "v": base64.b64encode(text).decode("ascii")}


def _xml_from_text(x: Any) -> Any:
    """The receiver's own element from that text, parsed without resolving any entity or reading
    anything (file or network) the text names."""
    try:
        from lxml import etree
    except ImportError:
        return Opaque("lxml.etree._Element", "an XML element (lxml is not installed here)")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        return etree.fromstring(base64.b64decode(_str(x), validate=True), parser)
    except (etree.XMLSyntaxError, ValueError) as e:
        raise WireError("malformed XML element") from e


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


def _pair(x: Any) -> tuple[Any, Any]:
    if type(x) is not list or len(x) != 2:
        raise WireError("malformed record")
    return x[0], x[1]


def _rebuild(name: str, attrs: dict[str, Any]) -> Any:
    """The candidate's copy of an object the tests made: a fresh class of that name holding its
    attributes (functions among them call the judge back)."""
    cls = type(name if name.isidentifier() else "Record", (), {"__module__": "tests"})
    obj = cls()
    for k, x in attrs.items():
        setattr(obj, k, x)
    return obj


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
