"""One path for every reply the code acts on (pagination, look-up, action):

    JSON the schema asked for → pydantic model → else the text, read tolerantly → same model

The pydantic model is the single definition of what a usable reply is; its validators
accept the loose forms models produce ("⟨7⟩" for 7, "id=40" for 40). Checks that need the
situation (a label that was offered, an id on the page, a page in range) come after, in
the caller, which reports them as the problem to re-ask with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from webagent.llm.client import Reply

M = TypeVar("M", bound=BaseModel)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "reply"
    return f"{where}: {err.get('msg', 'invalid')}"


def read_reply(reply: Reply, model: type[M], from_text: Callable[[str], dict | None]) -> tuple[M | None, str | None]:
    """(value, problem). A JSON object in the reply is validated as it is: when it does not
    fit, that is the problem (the text around a wrong JSON value is not mined for a
    plausible one, e.g. "click" inside a value). Only a reply with no JSON object is read
    as prose by `from_text`, which returns the fields it found (or None)."""
    fields: dict | None
    if isinstance(reply.data, dict):
        fields = reply.data
    else:
        fields = from_text(reply.text or "")
        if fields is None:
            return None, f"no {model.__name__} found in the reply"
    try:
        return model.model_validate(fields), None
    except ValidationError as exc:
        return None, _first_error(exc)
