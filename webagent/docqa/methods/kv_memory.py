"""Key-value tool memory (the LOLCATS report): the model reads the pages one chunk at a
time and keeps notes in a persistent key-value store with three tools,

    [list-keys]              → the keys stored so far
    [read] KEY               → the value under KEY
    [write] (KEY) VALUE      → store VALUE under KEY (replacing it)
    [EOQ]                    → done with this chunk

one call per turn in the report's "Q<n>: ... / #<n>: result" transcript, at most
`max_tool_calls` per chunk. The store is built once per document (the questions are not
known while reading) and shared by its questions; a question is answered from what was
stored, and an empty store answers "no answer" without asking (as MemWalker does).
`kv-memory-rolling` is the report's "rolling summary" variant: one key, current-summary,
rewritten with each chunk. A tool call still unusable after the re-ask
ends that chunk and is counted.
"""

from __future__ import annotations

import re

from webagent.docqa.answering import answer_question
from webagent.docqa.data import Question
from webagent.docqa.methods import NO_ANSWER, MethodResult, Variant
from webagent.docqa.reading import DocumentState
from webagent.llm.client import LLMClient, Reply
from webagent.llm.reask import ReplyTally, ask_until_usable
from webagent.memory import Page, word_count
from webagent.prompts import prompt_hash, render_prompt

TOOL_SCHEMA = {
    "type": "object",
    "properties": {
        "tool": {"type": "string", "enum": ["list-keys", "read", "write", "EOQ"]},
        "key": {"type": "string"},
        "value": {"type": "string"},
    },
    "required": ["tool"],
}
_LIST = re.compile(r"\[\s*list[-_ ]?keys\s*\]", re.IGNORECASE)
_READ = re.compile(r"\[\s*read\s*\]\s*\(?\s*([^()\n]+?)\s*\)?\s*$", re.IGNORECASE | re.MULTILINE)
_WRITE = re.compile(r"\[\s*write\s*\]\s*\(\s*([^()\n]+?)\s*\)\s*(.+)", re.IGNORECASE | re.DOTALL)
_WRITE_PLAIN = re.compile(r"\[\s*write\s*\]\s*([\w.-]+)\s*[:\s]\s*(.+)", re.IGNORECASE | re.DOTALL)
_EOQ = re.compile(r"\[\s*EOQ\s*\]", re.IGNORECASE)


def parse_tool(reply: Reply) -> tuple[tuple | None, str | None]:
    """("list-keys",) | ("read", key) | ("write", key, value) | ("eoq",): the first call in the reply."""
    data = reply.data
    if isinstance(data, dict) and isinstance(data.get("tool"), str):
        tool, key, value = (
            data["tool"].strip().lower(),
            str(data.get("key") or "").strip(),
            str(data.get("value") or "").strip(),
        )
        if tool in ("list-keys", "eoq"):
            return (tool,), None
        if tool == "read" and key:
            return ("read", key), None
        if tool == "write" and key and value:
            return ("write", key, value), None
        return None, f"tool {tool!r} needs a key{' and a value' if tool == 'write' else ''}"
    text = reply.text.strip()
    found = []
    for kind, pattern in (
        ("list-keys", _LIST),
        ("read", _READ),
        ("write", _WRITE),
        ("write", _WRITE_PLAIN),
        ("eoq", _EOQ),
    ):
        m = pattern.search(text)
        if m:
            found.append((m.start(), kind, m))
    if not found:
        return None, "no tool call ([list-keys], [read] KEY, [write] (KEY) VALUE or [EOQ]) found"
    _, kind, m = min(found, key=lambda f: f[0])
    if kind in ("list-keys", "eoq"):
        return (kind,), None
    if kind == "read":
        return ("read", m.group(1).strip()), None
    value = re.split(r"\n\s*(?:Q\d+:|#\d+:|\[EOQ\])", m.group(2))[0].strip()
    return (("write", m.group(1).strip(), value), None) if value else (None, "[write] needs a value")


def execute(store: dict[str, str], call: tuple) -> str:
    if call[0] == "list-keys":
        return ", ".join(store) or "(no keys yet)"
    if call[0] == "read":
        return store.get(call[1], f"(no key {call[1]})")
    store[call[1]] = call[2]
    return "(written)"


def render_call(call: tuple) -> str:
    return {
        "list-keys": "[list-keys]",
        "read": f"[read] {call[1] if len(call) > 1 else ''}",
        "write": f"[write] ({call[1]}) {call[2]}" if len(call) > 2 else "",
    }[call[0]]


async def read_document(client: LLMClient, pages: list[Page], *, prompt: str, max_tool_calls: int) -> tuple[dict, int]:
    """The store after reading every page, with what reading cost (failures, longest prompt)."""
    store: dict[str, str] = {}
    tally = ReplyTally()
    longest, tool_calls, n = 0, 0, len(pages)
    for i, page in enumerate(pages, 1):
        instructions = (
            "This is the first chunk: there is nothing stored yet."
            if i == 1
            else "This is the last chunk: make sure everything important is stored."
            if i == n
            else ""
        )
        lines: list[str] = []
        seen_words = page.words  # the chunk and what the tools returned (not the Q/# scaffolding)
        for step in range(1, max_tool_calls + 1):
            transcript = "\n".join([*lines, f"Q{step}:"])
            longest = max(longest, seen_words)
            call = await ask_until_usable(
                client,
                render_prompt(prompt, instructions=instructions, i=i, n=n, text=page.text, transcript=transcript),
                parse=parse_tool,
                schema=TOOL_SCHEMA,
                max_tokens=384,
                purpose="kv-read",
                tally=tally,
                instruction="Reply again with exactly one tool call: [list-keys], [read] KEY, "
                "[write] (KEY) VALUE, or [EOQ].",
            )
            if call is None or call[0] == "eoq":
                break
            tool_calls += 1
            result = execute(store, call)
            seen_words += word_count(result) if call[0] != "write" else 0
            lines += [f"Q{step}: {render_call(call)}", f"#{step}: {result}"]
    failures = tally.failures + (0 if store else 1)  # an empty store is a failed reading
    return {
        "store": store,
        "tool_calls": tool_calls,
        "longest_words": longest,
        "failures": failures,
        "problem": tally.problem if store else "nothing was written to the store",
    }, failures


async def run(client: LLMClient, state: DocumentState, question: Question, variant: Variant) -> MethodResult:
    opts = state.options
    pages = await state.pages_built()
    prompt = "kv_memory_rolling" if variant.method == "kv-memory-rolling" else "kv_memory_read"

    async def build(c: LLMClient):
        return await read_document(c, pages.value, prompt=prompt, max_tool_calls=opts.max_tool_calls)

    built = await state.once(
        variant.method, build, key_parts=(prompt_hash(prompt), opts.max_tool_calls), inputs=(pages,)
    )
    reading = built.value
    store = reading["store"]
    notes = {"keys": len(store), "tool_calls": reading["tool_calls"], "reading_failures": reading["failures"]}
    if not store:  # nothing answers from nothing: no answer prompt, whose guess could score
        return MethodResult(
            answer=NO_ANSWER,
            option=None,
            context_words=reading["longest_words"],
            failures=1,
            problem=reading["problem"],
            notes=notes,
        )
    context = "\n\n".join(f"[{k}]\n{v}" for k, v in store.items())
    out = await answer_question(client, context, question)
    stored_words = sum(word_count(v) for v in store.values())
    return MethodResult(
        answer=out.text,
        option=out.option,
        context_words=max(reading["longest_words"], stored_words),
        failures=out.failures,
        problem=out.problem,
        notes=notes,
    )
