"""Transfer: a bank of injection texts that succeeded before, replayed against another model or
defense (`--attack "bank[file=bank.json]"`). `randori attacks export` writes the bank from a results
store.

A bank is JSON: {"randori_bank": 1, "entries": [{suite, suite_version, user_task, injection_task,
goal, attack, model, defense, injections: {vector: text}}]}. A case takes the text of an entry with
the same goal (word for word, so a reworded goal never gets a stale text), preferring one found on
the same user task, whose vectors it then uses as they were; otherwise the entry's text goes into
every vector the case's user task reaches. A goal the bank has no text for is an error naming it.

`bank[file=...,any_goal=true]` scores a bank on goals it was not found on (a held-out split): each
entry whose text states its goal word for word becomes a template (the goal cut out, `GOAL`), and
every case gets the template that broke the most cases of the bank (the first found among equals),
with its own goal written in, in every vector its user task reaches. Entries that never state their
goal cannot carry over and are left out; a bank with no template is an error.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from randori.attacks.base import Attack, AttackContext
from randori.errors import UserError
from randori.tasks.task import InjectionTask, UserTask

FORMAT = 1


def write_bank(entries: list[dict[str, Any]], path: Path | None) -> str:
    """The bank as JSON text, also written to `path` when given."""
    text = json.dumps({"randori_bank": FORMAT, "entries": entries}, indent=1, ensure_ascii=False)
    if path is not None:
        try:
            path.write_text(text + "\n", encoding="utf-8")
        except OSError as e:
            raise UserError(f"cannot write {path}: {e.strerror}") from None
    return text


@functools.lru_cache(maxsize=8)
def read_bank(path: str) -> tuple[dict[str, Any], ...]:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise UserError(f"bank: cannot read {path}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"bank: {path} is not JSON ({e})") from None
    if not isinstance(raw, dict) or raw.get("randori_bank") != FORMAT or not isinstance(raw.get("entries"), list):
        raise UserError(f"bank: {path} is not a bank of injection texts (write one with `randori attacks export`)")
    entries = []
    for i, entry in enumerate(raw["entries"]):
        inj = entry.get("injections") if isinstance(entry, dict) else None
        if not (isinstance(inj, dict) and inj and all(isinstance(t, str) for t in inj.values())
                and isinstance(entry.get("goal"), str)):
            raise UserError(f"bank: {path}: entry {i} needs a goal and injections (vector -> text)")
        entries.append(entry)
    return tuple(entries)


GOAL = "{goal}"  # where a template's goal goes (written in by str.replace: other braces stay as they are)


def templates(entries: tuple[dict[str, Any], ...]) -> list[tuple[str, int]]:
    """The bank's texts with their goal cut out, each with how many entries it came from, most first
    (ties in the bank's order)."""
    counts: dict[str, int] = {}
    for e in entries:
        text = "\n".join(dict.fromkeys(e["injections"].values()))
        if e["goal"] and e["goal"] in text and GOAL not in text:
            template = text.replace(e["goal"], GOAL)
            counts[template] = counts.get(template, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


class Bank(Attack):
    description = ("Replays injection texts that succeeded before (a bank written by `randori attacks export`), "
                   "e.g. against another model or defense: bank[file=PATH]; bank[file=PATH,any_goal=true] "
                   "writes each case's own goal into the bank's most successful text (held-out goals).")
    parameters = {"file": str, "any_goal": bool}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if params.get("file"):
            read_bank(params["file"])  # a missing or malformed bank fails now, in one line

    def injections(self, user_task: UserTask, injection_task: InjectionTask | None,
                   context: AttackContext) -> dict[str, str]:
        if not self.params.get("file"):
            raise UserError("the bank attack needs a file: --attack \"bank[file=bank.json]\" (write one with "
                            "`randori attacks export`)")
        goal = injection_task.goal if injection_task is not None else None
        if self.params.get("any_goal"):
            return self._held_out(goal, context)
        found = [e for e in read_bank(self.params["file"]) if e["goal"] == goal]
        if not found:
            raise UserError(f"the bank {self.params['file']} has no text for {getattr(injection_task, 'id', '?')} "
                            f"(goal: {goal!r}); select the injection tasks it covers with -i")
        targets = set(context.vectors) | set(context.tool_vectors)
        for e in found:
            if e.get("user_task") == user_task.id and set(e["injections"]) <= targets:
                return dict(e["injections"])
        text = "\n".join(dict.fromkeys(found[0]["injections"].values()))
        tool_only = set(found[0]["injections"]) <= set(context.tool_vectors)
        return dict.fromkeys(context.tool_vectors if tool_only else context.vectors, text)

    def _held_out(self, goal: str | None, context: AttackContext) -> dict[str, str]:
        best = templates(read_bank(self.params["file"]))
        if not best:
            raise UserError(f"the bank {self.params['file']} has no text that states its goal word for word, so "
                            "none carries over to another goal (any_goal)")
        text = best[0][0].replace(GOAL, goal or "")
        return dict.fromkeys(context.vectors or context.tool_vectors, text)
