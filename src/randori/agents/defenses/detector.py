"""`detector`: a prompt-injection detector on every tool output, which redacts the output (default) or
aborts the case. Built in: a heuristic detector that needs no model. Optional: a transformers text
classifier loaded from a local path (`detector[model=/path/to/classifier]`, e.g. a downloaded
ProtectAI deberta prompt-injection model), which needs the `transformers` package and a backend.

Parameters: `mode` = redact | abort, `model` = local classifier path, `threshold` (classifier score
above which an output counts as an injection; default 0.5).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from randori.agents.defenses.base import DETECTION_KEYS, Defense, DefenseAbort, detection_key
from randori.errors import UserError
from randori.vocabulary import ToolCall, ToolResult, Usage

REDACTED = "[randori: this tool output was withheld because it looks like a prompt injection]"

# Signals of text that talks to the model instead of being data. Each is cheap, and benign data in
# the built-in suites triggers none of them (tests/defenses check both directions).
_I = re.IGNORECASE
SIGNALS: dict[str, re.Pattern[str]] = {
    "override": re.compile(r"\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(instruction|directive|"
                           r"rule|prompt|guideline|everything|all|previous|prior|earlier)", _I),
    "new_instructions": re.compile(r"\b(new|updated|additional|important|urgent|priority|hidden|secret)\s+"
                                   r"(instructions?|directives?|orders?|tasks?)\b", _I),
    "priority_claim": re.compile(r"\b(takes?|has|have|with) (top |the highest |absolute )?priority\b|"
                                 r"\boverrides? (any|every|all|the)\b", _I),
    "addresses_model": re.compile(r"(^|[\n.!?]\s*)(dear\s+)?(AI|assistant|language model|LLM|chat ?bot|agent|"
                                  r"GPT-?\d*|ChatGPT|Claude|Gemini|Llama|Qwen|Mistral)\s*[,:!]", _I),
    "fake_tag": re.compile(r"<\s*/?\s*(information|system|instructions?|admin|important|im_start|im_end)\b[^>]*>|"
                           r"\[/?\s*(system|inst|admin)\s*\]|<\|[a-z_]+\|>|#{2,}\s*(system|instruction)", _I),
    "before_you": re.compile(r"\bbefore (you )?(continu|proceed|do(ing)? anything|answer|finish|complet|"
                             r"carry on|go on|respond)", _I),
    "todo": re.compile(r"\bTODO\b"),
    # Log lines say "WARNING:" and manuals "IMPORTANT:"; only the exclamation is a tell.
    "shouting": re.compile(r"\b(IMPORTANT|URGENT|ATTENTION)\s*!"),
    "secrecy": re.compile(r"\b(do not|don't|never|without) (tell|telling|inform|informing|mention|mentioning|"
                          r"notify|notifying|alert|alerting)\b[^.\n]{0,30}\b(user|anyone|them|her|him|owner)", _I),
    "stop_now": re.compile(r"\b(stop|halt|cease|abort)\b[^.\n]{0,30}\b(now|immediately|working|processing|"
                           r"at once|right away)\b", _I),
    "captcha": re.compile(r"\bcaptcha\b", _I),
    "abuse": re.compile(r"\b(useless|stupid|worthless|pathetic|idiotic)\b[^.\n]{0,20}\b(machine|bot|AI|"
                        r"assistant|program)\b|\bhateful rant\b", _I),
    "legal_threat": re.compile(r"\b(criminal offen[cs]e|illegal to (read|process|use|store))\b", _I),
}


def heuristic_signals(text: str) -> list[str]:
    """Names of the signals found in `text` (empty: looks like data)."""
    return [name for name, rx in SIGNALS.items() if rx.search(text)]


INJECTION_LABELS = {"INJECTION", "JAILBREAK", "MALICIOUS", "UNSAFE", "LABEL_1", "1"}


@functools.lru_cache(maxsize=4)
def _load_pipeline(path: str) -> Callable[..., Any]:
    try:
        from transformers import pipeline  # type: ignore[import-not-found]
    except ImportError:
        raise UserError("detector[model=...] needs the 'transformers' package (and a backend such as torch)") from None
    try:
        return pipeline("text-classification", model=path, tokenizer=path)  # type: ignore[no-any-return]
    except (OSError, ValueError) as e:
        raise UserError(f"detector: cannot load a classifier from {path}: {e}") from None


def chunks(text: str, size: int = 1500) -> list[str]:
    """Line-aligned pieces short enough for a classifier's context: an injection at the end of a long
    output must not be truncated away."""
    out, cur = [], ""
    for line in text.splitlines(keepends=True):
        while len(line) > size:
            out.append(line[:size])
            line = line[size:]
        if len(cur) + len(line) > size and cur:
            out.append(cur)
            cur = ""
        cur += line
    if cur.strip():
        out.append(cur)
    return out


class Detector(Defense):
    description = ("Prompt-injection detector on tool output; redacts it (or aborts with mode=abort). Heuristic by "
                   "default; a local transformers classifier with model=PATH.")
    parameters = {"mode": str, "model": str, "threshold": float}

    def __init__(self, mode: str = "redact", model: str | None = None, threshold: float = 0.5):
        if mode not in ("redact", "abort"):
            raise UserError(f"detector: mode must be redact or abort, got '{mode}'")
        if not 0 <= threshold <= 1:  # also refuses nan
            raise UserError(f"detector: threshold must be a number from 0 to 1 (a classifier's score), not {threshold}")
        params: dict[str, Any] = {k: v for k, v in (("mode", mode), ("model", model), ("threshold", threshold))
                                  if (k, v) not in (("mode", "redact"), ("model", None), ("threshold", 0.5))}
        super().__init__(**params)
        self.mode, self.model_path, self.threshold = mode, model, threshold
        self.counts = dict.fromkeys(DETECTION_KEYS, 0)
        if model is not None:
            _load_pipeline(model)  # fail at plan time, with one line, not in every case

    def detections(self) -> dict[str, int]:
        return dict(self.counts)

    def detect(self, text: str) -> tuple[bool, str]:
        if self.model_path is None:
            found = heuristic_signals(text)
            return bool(found), ", ".join(found)
        classify = _load_pipeline(self.model_path)
        pieces = chunks(text)
        self.usage = self.usage + Usage(model_calls=len(pieces))
        best = 0.0
        for res in classify(pieces, truncation=True):
            label = str(res["label"]).upper()
            score = float(res["score"]) if label in INJECTION_LABELS else 1.0 - float(res["score"])
            best = max(best, score)
        return best >= self.threshold, f"classifier score {best:.2f}"

    async def on_tool_result(self, call: ToolCall, result: ToolResult) -> ToolResult:
        if result.error is not None or not result.content:
            return result
        flagged, why = self.detect(result.content)
        self.counts[detection_key(bool(result.vectors_seen), flagged)] += 1
        if not flagged:
            return result
        if self.mode == "abort":
            self.note(f"aborted on {call.function} output ({why})")
            raise DefenseAbort(f"prompt injection detected in {call.function} output ({why})")
        self.note(f"withheld {call.function} output ({why})")
        return result.model_copy(update={"content": REDACTED})
