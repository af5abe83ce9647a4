"""`randori models`, and the one-line errors a user meets when a provider cannot start."""

import json
import re
from pathlib import Path

import pytest

import randori.agents.models as models
from randori import errors
from randori.agents.models import get_model
from randori.errors import UserError, install_hint
from tests.helpers import randori

ROOT = Path(__file__).resolve().parents[2]


def test_models_lists_every_provider_with_install_state_and_env_vars():
    r = randori("models", "-f", "json", env={"ANTHROPIC_API_KEY": "sk-ant-secret-value-123"})
    assert r.returncode == 0, r.stderr
    rows = {x["provider"]: x for x in json.loads(r.stdout)}
    assert set(rows) >= {"openai", "anthropic", "google", "ollama", "vllm", "local", "scripted"}
    assert rows["openai"]["installed"] is True and "OPENAI_API_KEY" in rows["openai"]["env"]
    assert rows["anthropic"]["env"]["ANTHROPIC_API_KEY"] is True  # said to be set...
    assert "sk-ant-secret-value-123" not in r.stdout  # ...never shown
    assert "GOOGLE_API_KEY" in rows["google"]["env"] and "VLLM_BASE_URL" in rows["vllm"]["env"]
    assert rows["local"]["installed"] is models.module_available("llama_cpp")
    if not rows["local"]["installed"]:
        assert rows["local"]["install"] == install_hint("local")
    assert rows["local"]["max_concurrency"] in (1, None)
    table = randori("models")
    assert table.returncode == 0 and "anthropic" in table.stdout and "ANTHROPIC_API_KEY" in table.stdout


def test_missing_sdk_names_the_extra(monkeypatch):
    monkeypatch.setattr(models, "module_available", lambda name: name != "anthropic")
    with pytest.raises(UserError, match=re.escape(install_hint("anthropic"))):
        get_model("anthropic/claude-x")


def test_install_hints_fit_how_randori_was_installed(tmp_path, monkeypatch):
    # This test runs from a checkout (an editable install): PyPI's randori is not what a user has.
    monkeypatch.chdir(ROOT)
    assert install_hint("anthropic") == "pip install -e '.[anthropic]'"
    monkeypatch.chdir(tmp_path)
    hint = install_hint("anthropic")
    assert hint.startswith("pip install -e '") and hint.endswith("[anthropic]'")
    path = hint.split("'")[1].removesuffix("[anthropic]")
    assert (tmp_path / path / "pyproject.toml").resolve() == ROOT / "pyproject.toml"
    # An installed wheel has no checkout around it.
    monkeypatch.setattr(errors, "__file__", str(tmp_path / "site-packages" / "randori" / "errors.py"))
    assert install_hint("viewer") == "pip install 'randori[viewer]'"


@pytest.mark.parametrize("args, env, message", [
    (["-m", "vllm/qwen"], {}, "vllm/qwen needs the server's address"),
    (["-m", "anthropic/claude-x"], {"ANTHROPIC_API_KEY": ""}, "ANTHROPIC_API_KEY is not set"),
    (["-m", "openai/gpt-4o-mini"], {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}, "OPENAI_API_KEY is not set"),
    (["-m", "nope/x"], {}, "unknown model provider 'nope'"),
    (["-m", "openai/gpt-4o-mini", "--prices", "/nonexistent/p.toml"], {}, "cannot read price file"),
])
def test_provider_mistakes_exit_2_with_one_line(args, env, message, tmp_path):
    env = {"VLLM_BASE_URL": "", **env}
    r = randori("run", "-s", "banking", "-r", str(tmp_path), *args, env=env)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith(f"randori: error: {message}")
    assert "Traceback" not in r.stderr


def test_ollama_defaults_to_the_local_server(monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("OLLAMA_BASE_URL", raising=False)
    assert get_model("ollama/qwen2.5").base_url == "http://localhost:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "10.1.2.3:9999")
    assert get_model("ollama/qwen2.5").base_url == "http://10.1.2.3:9999/v1"
    monkeypatch.setenv("VLLM_BASE_URL", "http://gpu-box:8000/v1")
    m = get_model("vllm/Qwen/Qwen2.5-7B-Instruct")
    assert m.base_url == "http://gpu-box:8000/v1" and m.name == "vllm/Qwen/Qwen2.5-7B-Instruct"
