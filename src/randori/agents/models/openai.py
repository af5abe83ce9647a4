"""OpenAI and every OpenAI-compatible server (vLLM, Ollama, llama.cpp server, OpenRouter...),
through the official `openai` SDK with native tool calls. `ollama/<model>` and `vllm/<model>` are the
same provider with their usual endpoints filled in."""

from __future__ import annotations

import json
import os
from typing import Any

from randori.agents.models.base import Completion, ModelSettings, ProviderModel, check_base_url
from randori.agents.models.resilience import connection_error, parse_retry_after, status_error, transport_error
from randori.errors import AuthError, ModelError, UserError, clip, register_secret
from randori.tools.function import Tool
from randori.vocabulary import Message, ToolCall, Usage

FINISH = {"stop": "stop", "tool_calls": "tool_calls", "function_call": "tool_calls", "length": "length",
          "content_filter": "filtered"}


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    return [to_openai_message(m) for m in messages]


def to_openai_message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        call_id = m.tool_result.call_id if m.tool_result else ""
        return {"role": "tool", "tool_call_id": call_id, "content": m.content}
    if m.role == "assistant":
        msg: dict[str, Any] = {"role": "assistant", "content": m.content or None}
        if m.tool_calls:
            msg["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.function, "arguments": json.dumps(c.args)}}
                                 for c in m.tool_calls]
        return msg
    return {"role": m.role, "content": m.content}


# How the SDK itself encodes a JSON body.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class WireCache:
    """The encoded JSON of what every request of a run repeats. A conversation is resent whole on
    each turn, with the suite's every tool schema (10-16 KB), so encoding the body was the largest
    single CPU cost of a client call; here each tool list and each message is encoded once.

    Messages are keyed by their full text; a tool list by the ids of tools its entry keeps alive."""

    # Past this many encoded bytes (their texts, kept as keys, about as much again) the message table
    # starts over; the conversations in flight then encode their messages once more.
    MESSAGE_BYTES = 16 << 20
    TOOL_LISTS = 256

    def __init__(self) -> None:
        self.tools: dict[tuple[int, ...], tuple[list[Tool], bytes]] = {}
        self.messages: dict[tuple[str, str, str], bytes] = {}
        self.message_bytes = 0

    def body(self, head: dict[str, Any], messages: list[Message], tools: list[Tool],
             tail: dict[str, Any]) -> bytes:
        """The same JSON object as {**head, "messages": ..., **tail, "tools": ...} (tools only when
        given), in that key order."""
        parts = [_encode(head)[:-1].encode(), b',"messages":[', b",".join(map(self.message, messages)), b"]"]
        if tail:
            parts += [b",", _encode(tail)[1:-1].encode()]
        if tools:
            parts += [b',"tools":', self.tool_list(tools)]
        parts.append(b"}")
        return b"".join(parts)

    def message(self, m: Message) -> bytes:
        if m.role == "assistant":  # short, and holds arguments that are not part of a cheap key
            return _encode(to_openai_message(m)).encode()
        key = (m.role, m.content, m.tool_result.call_id if m.tool_result else "")
        hit = self.messages.get(key)
        if hit is None:
            hit = _encode(to_openai_message(m)).encode()
            if self.message_bytes + len(hit) > self.MESSAGE_BYTES:
                self.messages.clear()
                self.message_bytes = 0
            self.messages[key] = hit
            self.message_bytes += len(hit)
        return hit

    def tool_list(self, tools: list[Tool]) -> bytes:
        key = tuple(map(id, tools))  # the entry keeps the tools alive, so no other object takes an id
        hit = self.tools.get(key)
        if hit is None:
            if len(self.tools) >= self.TOOL_LISTS:
                self.tools.clear()
            hit = self.tools[key] = (list(tools), _encode([t.schema() for t in tools]).encode())
        return hit[1]


def parse_tool_call(call_id: str, name: str, arguments: str | None) -> ToolCall:
    raw = arguments or "{}"
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as e:
        return ToolCall(id=call_id, function=name, parse_error=f"invalid JSON ({e.msg})")
    if not isinstance(args, dict):
        return ToolCall(id=call_id, function=name, parse_error="arguments are not a JSON object")
    return ToolCall(id=call_id, function=name, args=args)


def openai_usage(u: Any) -> Usage:
    """Usage of one reply, from the SDK's object or the reply's JSON; prompt_tokens already counts the
    cached tokens among them."""
    def field(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    details = field(u, "prompt_tokens_details")
    return Usage(model_calls=1, input_tokens=field(u, "prompt_tokens") or 0,
                 output_tokens=field(u, "completion_tokens") or 0,
                 cached_input_tokens=field(details, "cached_tokens") or 0)


def request_params(settings: ModelSettings, *, max_tokens_field: str = "max_tokens") -> dict[str, Any]:
    """Settings as sent: every value that is set goes out as is (temperature 0.0 included)."""
    params: dict[str, Any] = {}
    if settings.temperature is not None:
        params["temperature"] = settings.temperature
    if settings.seed is not None:
        params["seed"] = settings.seed
    if settings.max_tokens is not None:
        params[max_tokens_field] = settings.max_tokens
    if settings.reasoning_effort is not None:
        params["reasoning_effort"] = settings.reasoning_effort
    return params


def map_openai_error(name: str, e: Exception) -> ModelError:
    """An exception from the openai SDK as a categorised `ModelError` (AuthError for credentials)."""
    import openai

    if isinstance(e, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return AuthError(f"{name}: authentication failed (HTTP {e.status_code}); check the API key")
    if isinstance(e, openai.APITimeoutError) and not _dropped(e):
        return ModelError("timeout", f"{name}: request timed out")
    if isinstance(e, openai.APIConnectionError):  # APITimeoutError included: see _dropped
        return connection_error(name, e)
    if isinstance(e, openai.APIStatusError):
        return status_error(name, e.status_code, _error_text(e), parse_retry_after(e.response.headers),
                            e.response.headers)
    if isinstance(e, (openai.APIError, ValueError)):  # includes a body that is not JSON
        return ModelError("bad_response", f"{name}: unreadable reply ({clip(str(e), 200)})")
    return transport_error(name, e)


def _dropped(e: BaseException) -> bool:
    """The SDK's aiohttp transport reports a refused or closed connection as a connect timeout; the
    exception chain still holds aiohttp's own, truer error."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        kind = type(cur)
        if kind.__module__.startswith("aiohttp") and "Timeout" not in kind.__name__:
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def _error_text(e: Any) -> str:
    return error_body_text(getattr(e, "body", None)) or str(getattr(e, "message", e))


def error_body_text(body: Any) -> str | None:
    """What an error reply's JSON says: its `error`'s code and message (None if it is not that shape)."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return " ".join(str(err.get(k, "")) for k in ("code", "message")).strip()
    return None


TRANSPORT_ENV = "RANDORI_OPENAI_TRANSPORT"
TRANSPORTS = ("direct", "aiohttp", "httpx")
RAW_RESPONSE = "X-Stainless-Raw-Response"


def transport_choice() -> str:
    """`direct` (the default): randori sends the chat request itself over aiohttp (see DirectClient);
    `aiohttp` or `httpx`: through the SDK's `post`, with that transport."""
    choice = os.environ.get(TRANSPORT_ENV, "direct").strip().lower()
    if choice not in TRANSPORTS:
        raise UserError(f"{TRANSPORT_ENV} must be one of {', '.join(TRANSPORTS)}, not {choice!r}")
    return choice


def _http_client(openai: Any, choice: str) -> Any:
    """The SDK's aiohttp transport (its documented choice for high concurrency), or its default
    httpx one when asked for or when the aiohttp extra is missing."""
    if choice != "httpx":
        try:
            return openai.DefaultAioHttpClient()
        except (AttributeError, RuntimeError):  # an SDK without the class, or without aiohttp
            pass
    return openai.DefaultAsyncHttpxClient()


OPENAI_URL = "https://api.openai.com/v1"


def sdk_headers(key: str) -> dict[str, str]:
    """What the SDK sends with every request that says who is asking: the key, and the organization
    and project from the SDK's own environment variables."""
    from randori import __version__

    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json",
               "User-Agent": f"randori/{__version__}"}
    for var, name in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
        if os.environ.get(var):
            headers[name] = os.environ[var]
    return headers


class DirectClient:
    """One POST to `chat/completions`, sent by randori over aiohttp, with the headers the SDK sends
    (`sdk_headers`), the same address and timeout (per connect and per read, as httpx's).

    The SDK's request machinery (option models, header merging, URL parsing, typed reply) cost
    0.71 ms of CPU per call against a local server, this path 0.12 ms (benchmarks/openai_transport.py).
    At 128 cases in flight against a 200 ms provider that CPU is what bounds a run on one core. The
    reply is read as JSON and judged field by field (`parse_completion`); errors become the same
    categorised `ModelError`s as the SDK's exceptions do (`status_error`, `transport_error`).

    An address with credentials in it (`https://user:password@proxy/v1`) is answered with HTTP basic
    authentication from them instead of the key, as the SDK's httpx transport does (its aiohttp one
    refuses such an address)."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float | None):
        import urllib.parse

        self.url = base_url.rstrip("/") + "/chat/completions"
        if urllib.parse.urlsplit(self.url).username is not None:  # aiohttp sends them as basic authentication
            headers = {k: v for k, v in headers.items() if k != "Authorization"}
        self.headers = headers
        self.timeout = timeout
        self.session: Any = None  # made in the event loop of the first request (it is bound to it)

    def _session(self) -> Any:
        import aiohttp

        if self.session is None:
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.timeout, sock_read=self.timeout)
            connector = aiohttp.TCPConnector(limit=1000, ssl=_ssl_context() if self.url.startswith("https") else True)
            # The proxy is looked up once here: aiohttp's trust_env looks it up again on every request,
            # which cost more CPU than all the rest of a call.
            self.proxy = proxy_for(self.url)
            self.session = aiohttp.ClientSession(connector=connector, timeout=timeout)
        return self.session

    async def post(self, body: bytes) -> tuple[int, Any, bytes]:
        session = self._session()
        async with session.post(self.url, data=body, headers=self.headers, allow_redirects=False,
                                proxy=self.proxy) as r:
            return r.status, r.headers, await r.read()

    async def aclose(self) -> None:
        if self.session is not None:
            await self.session.close()
            self.session = None


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for `url` (HTTPS_PROXY, HTTP_PROXY or ALL_PROXY, unless
    NO_PROXY exempts its host), as httpx and aiohttp read them."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if not proxies or bypass(parts.hostname or "", proxies):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


def _ssl_context() -> Any:
    """Certificates as the SDK's httpx finds them: SSL_CERT_FILE, else certifi's bundle."""
    import ssl

    import certifi

    return ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or certifi.where())


def body_error_text(raw: bytes) -> str:
    """What an error reply says: its `error`'s code and message when it is OpenAI's JSON shape."""
    try:
        text = error_body_text(json.loads(raw))
    except ValueError:
        text = None
    return raw.decode("utf-8", "replace") if text is None else text


def parse_completion(name: str, raw: bytes, headers: Any) -> Completion:
    """A chat completion's JSON as a `Completion`; anything of another shape is a bad response."""
    try:
        data = json.loads(raw)
        choice = data["choices"][0] if data.get("choices") else None
        msg = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(choice, dict) or not isinstance(msg, dict):
            raise ModelError("bad_response", f"{name}: reply had no choices")
        content = msg.get("content") or ""
        if not isinstance(content, str):
            raise ValueError("the message's content is not text")
        calls = [parse_tool_call(str(c["id"]), c["function"].get("name") or "", c["function"].get("arguments"))
                 for c in msg.get("tool_calls") or [] if c.get("type", "function") == "function"]
        usage = openai_usage(data.get("usage") or {})
        finish = FINISH.get(choice.get("finish_reason") or "stop", "other")
        return Completion(Message.assistant(content, calls, usage=usage), finish, headers)
    except ModelError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        raise ModelError("bad_response", f"{name}: unreadable reply ({clip(str(e), 200)})") from e


class OpenAIModel(ProviderModel):
    provider = "openai"
    api_key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    default_base_url: str | None = None
    max_concurrency = 16

    def __init__(self, model: str, settings: ModelSettings, *, base_url: str | None = None,
                 api_key: str | None = None, timeout: float | None = 120.0, **_: Any):
        super().__init__(model, settings)
        if not base_url and os.environ.get(self.base_url_env):
            base_url = check_base_url(os.environ[self.base_url_env], self.base_url_env)
        base_url = base_url or self.default_base_url
        key = api_key or os.environ.get(self.api_key_env)
        register_secret(key)
        if not key:
            if base_url is None:
                raise UserError(f"{self.api_key_env} is not set (needed for {self.provider}/{model}); "
                                "for a local server pass --base-url")
            key = "not-needed"  # local OpenAI-compatible servers accept any key
        self.base_url = base_url
        self.transport = transport_choice()
        self.client: Any = None
        self._http: Any = None
        self.direct: DirectClient | None = None
        if self.transport == "direct":  # the SDK is not even imported (half a second per process)
            self.direct = DirectClient(base_url or OPENAI_URL, sdk_headers(key), timeout)
        else:
            import openai

            # Retries happen once, in the resilience layer, so the SDK must not retry on its own.
            self._http = _http_client(openai, self.transport)
            self.client = openai.AsyncOpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=0,
                                             http_client=self._http)
        # OpenAI itself wants max_completion_tokens (reasoning models refuse max_tokens); compatible
        # servers understand max_tokens.
        self.max_tokens_field = "max_completion_tokens" if base_url is None else "max_tokens"
        self.wire = WireCache()

    @classmethod
    def preload(cls) -> None:
        if transport_choice() == "direct":
            import aiohttp  # noqa: F401  (DirectClient imports it at the first request)
        else:
            import openai  # noqa: F401

    async def generate(self, messages: list[Message], tools: list[Tool],
                       settings: ModelSettings | None = None) -> Completion:
        s = settings or self.settings
        body = self.wire.body({"model": self.model}, messages, tools,
                              request_params(s, max_tokens_field=self.max_tokens_field))
        if self.direct is not None:
            return await self._generate_direct(body)
        from openai.types.chat import ChatCompletion

        try:
            # The SDK's documented custom-request path: same client, auth, errors and typed reply, but
            # it skips `create`'s recursive re-validation of every message and tool schema, which was
            # the largest CPU cost of a run. The body goes as JSON already encoded (see WireCache).
            # The raw-response header makes the SDK hand back the response itself, headers and all
            # (its documented with_raw_response does the same): they carry the rate-limit state.
            raw: Any = await self.client.post("/chat/completions", cast_to=ChatCompletion, content=body,
                                              options={"headers": {RAW_RESPONSE: "true"}})
            resp = raw.parse()
        except Exception as e:
            raise map_openai_error(self.name, e) from e
        if not resp.choices or resp.choices[0].message is None:
            raise ModelError("bad_response", f"{self.name}: reply had no choices")
        choice = resp.choices[0]
        msg = choice.message
        calls = [parse_tool_call(c.id, c.function.name or "", c.function.arguments)
                 for c in msg.tool_calls or [] if c.type == "function"]
        usage = openai_usage(resp.usage)
        return Completion(Message.assistant(msg.content or "", calls, usage=usage),
                          FINISH.get(choice.finish_reason or "stop", "other"), raw.headers)

    async def _generate_direct(self, body: bytes) -> Completion:
        try:
            status, headers, raw = await self.direct.post(body)  # type: ignore[union-attr]
        except Exception as e:
            raise transport_error(self.name, e) from e
        if not 200 <= status < 300:
            raise status_error(self.name, status, body_error_text(raw), parse_retry_after(headers), headers)
        return parse_completion(self.name, raw, headers)

    async def aclose(self) -> None:
        if self.direct is not None:
            await self.direct.aclose()
        if self.client is not None:
            await self.client.close()


class OllamaModel(OpenAIModel):
    """A model served by Ollama (`ollama serve`), through its OpenAI-compatible endpoint."""

    provider = "ollama"
    api_key_env = "OLLAMA_API_KEY"
    base_url_env = "OLLAMA_BASE_URL"
    max_concurrency = 2  # Ollama serves few requests in parallel by default; more only queue there

    def __init__(self, model: str, settings: ModelSettings, **options: Any):
        host = os.environ.get("OLLAMA_HOST", "localhost:11434")
        host = host if "://" in host else f"http://{host}"
        self.default_base_url = check_base_url(f"{host.rstrip('/')}/v1", "OLLAMA_HOST")
        super().__init__(model, settings, **options)


class VLLMModel(OpenAIModel):
    """A model served by vLLM (`vllm serve`); its address is not guessable, so it must be given."""

    provider = "vllm"
    api_key_env = "VLLM_API_KEY"
    base_url_env = "VLLM_BASE_URL"
    max_concurrency = 32  # vLLM batches concurrent requests; parallelism is what makes it fast

    def __init__(self, model: str, settings: ModelSettings, *, base_url: str | None = None, **options: Any):
        if not (base_url or os.environ.get(self.base_url_env)):
            raise UserError(f"vllm/{model} needs the server's address: pass --base-url "
                            f"http://HOST:8000/v1 or set {self.base_url_env}")
        super().__init__(model, settings, base_url=base_url, **options)
