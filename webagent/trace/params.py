"""Typed values as named parameters.

A workflow keeps every value as it was recorded (its *default*); a parameter names a
recorded value so that a replay can put another one in its place:

* declared at record time: ``webagent run --param name="Ada Lovelace"`` (any TYPE or
  SELECT value that is, or contains, "Ada Lovelace" becomes ``{name}``);
* inferred: a TYPE value that is a literal substring of the task (case aside), named
  after its field (name attribute, id, label or placeholder);
* passwords: never stored (the trace has ``********``); the step's parameter has no
  default, and a replay without ``--param NAME=...`` is refused before it starts.

At replay time ``substitution(...)`` maps each recorded value to its new one; the runner
applies it to values, to the fingerprints' texts (a link named after the book), to
page titles, the task and the final answer.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from webagent.browser import REDACTED
from webagent.errors import UserError
from webagent.trace.fingerprint import Fingerprint, slug
from webagent.trace.step import RecordedStep

MIN_INFERRED = 2  # shorter typed values are not taken for parameters


def parse_params(items) -> dict[str, str]:
    """``["name=Ada Lovelace", ...]`` → ``{"name": "Ada Lovelace"}``."""
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = str(item).partition("=")
        key = key.strip()
        if not sep or not key:
            raise UserError(f'--param {item!r}: write it as NAME=VALUE, e.g. --param name="Ada Lovelace"')
        if not key.replace("_", "").replace("-", "").isalnum():
            raise UserError(f"--param {key!r}: a parameter name is letters, digits, '_' and '-'")
        out[key] = value
    return out


def field_name(target: Fingerprint | None, taken: set[str]) -> str:
    """A parameter name for a field: its name attribute, id, label or placeholder."""
    target = target or Fingerprint()
    attrs = target.attrs
    for text in (
        attrs.get("name"),
        attrs.get("id"),
        target.label,
        attrs.get("aria-label"),
        attrs.get("placeholder"),
        target.name,
    ):
        name = slug(text or "")
        if len(name) >= 3:
            break
    else:
        name = "value"
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def assign(steps: list[RecordedStep], task: str, declared: dict[str, str] | None = None) -> dict[str, dict]:
    """Mark each step whose value is a parameter (``step.param``); return the
    parameters: ``{name: {"default": value or None, "source": declared|task|password}}``."""
    params: dict[str, dict] = {}
    declared = {k: v for k, v in (declared or {}).items() if v}
    for name, value in declared.items():
        params[name] = {"default": value, "source": "declared"}
    lowered = task.lower()
    for step in steps:
        if step.op not in ("TYPE", "SELECT"):
            continue
        value = step.value
        if step.secret or value == REDACTED:
            secret = next(
                (n for n, p in params.items() if p["source"] == "password" and p.get("field") == _field_key(step)), None
            )
            if secret is None:
                secret = "password" if "password" not in params else field_name(step.target, set(params))
                params[secret] = {"default": None, "source": "password", "field": _field_key(step)}
            step.param, step.value = secret, REDACTED
            continue
        hit = next((n for n, v in sorted(declared.items(), key=lambda kv: -len(kv[1])) if v in value), None)
        if known := hit or next((n for n, p in params.items() if p["default"] == value), None):
            step.param = known
            continue
        if step.op == "TYPE" and len(value.strip()) >= MIN_INFERRED and value.lower() in lowered:
            name = field_name(step.target, set(params))
            params[name] = {"default": value, "source": "task"}
            step.param = name
    return params


def _field_key(step: RecordedStep) -> str:
    target = step.target or Fingerprint()
    return target.attrs.get("name") or target.attrs.get("id") or target.label or ""


def resolve(params: dict[str, dict], given: dict[str, str]) -> dict[str, str]:
    """The value of every parameter for one replay: given, else the recorded default.
    Unknown names and password parameters without a value are refused."""
    unknown = sorted(set(given) - set(params))
    if unknown:
        known = (
            ", ".join(f"{n} (default {p['default']!r})" if p["default"] is not None else n for n, p in params.items())
            or "none"
        )
        raise UserError(f"unknown --param {', '.join(unknown)}; this workflow's parameters: {known}")
    if missing := [n for n, spec in params.items() if n not in given and spec["default"] is None]:
        raise UserError(
            f"the workflow types a password (parameter {missing[0]!r}), which is never stored: "
            f"give it with --param {missing[0]}=..."
        )
    return {name: given.get(name, spec["default"]) for name, spec in params.items()}


def substitution(params: dict[str, dict], values: dict[str, str]) -> dict[str, str]:
    """Recorded value → new value, for the parameters that change (longest first)."""
    pairs = {
        p["default"]: values[n] for n, p in params.items() if p["default"] and n in values and values[n] != p["default"]
    }
    return dict(sorted(pairs.items(), key=lambda kv: -len(kv[0])))


def apply(value, mapping: dict[str, str]):
    """``value`` (str, list, tuple, dict or model, recursively) with each recorded value
    replaced (a tuple comes back a list)."""
    if not mapping:
        return value

    def replaced(text: str) -> str:
        for old, new in mapping.items():
            text = text.replace(old, new)
        return text

    return map_strings(value, replaced)


def map_strings(value, fn: Callable[[str], str]):
    """``value`` (str, list, tuple, dict or model, recursively) with ``fn`` applied to each of
    its strings (a tuple comes back a list; a dict's keys are kept)."""
    if isinstance(value, BaseModel):  # (its fields as set: a step's or a fingerprint's)
        return type(value).model_validate(map_strings(value.model_dump(exclude_unset=True), fn))
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [map_strings(v, fn) for v in value]
    return value


def step_value(step: RecordedStep, values: dict[str, str], mapping: dict[str, str]) -> str:
    """The value a step types or selects in this replay."""
    if step.param and step.value == REDACTED:
        return values[step.param]
    return apply(step.value, mapping)


def unapply(value, mapping: dict[str, str]):
    """Back from this replay's values to the recorded defaults (for a repaired step)."""
    return apply(value, {new: old for old, new in mapping.items() if new})
