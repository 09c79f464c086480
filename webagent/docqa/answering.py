"""The final answer from a context, with the paper's answer prompts (Appendix F).

Multiple choice (QuALITY): the question is asked with its four options and the reply
is parsed to one option — JSON {"answer": "C"} where the endpoint gives structured
replies, else "Answer: (C) ...". An unparseable reply is re-asked once, then the
question counts as a failure and is wrong: never a default option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from webagent.docqa.data import OPTION_LETTERS, Question
from webagent.llm.client import LLMClient, ModelCallError, Reply
from webagent.llm.reask import ReplyTally, ask_until_usable
from webagent.prompts import render_prompt

OPTION_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": list(OPTION_LETTERS)}},
    "required": ["answer"],
}
FREE_MAX_TOKENS = 256

# Letters are options in their usual forms only, so that English words are never read as
# options ("The answer is a bit unclear" is not (A)): after "answer" (is / : / =), an upper-case
# letter standing alone, or any case in parentheses or ending the line or sentence ("answer: d.");
# "(C)" anywhere; "C)" starting a line or after a space.
_ANSWER_LETTER = re.compile(
    r"\banswer\b\s*(?:is\b)?\s*[:=]?\s*(?:option\s+)?"
    r"(?:\(\s*([A-Da-d])\s*\)|(?-i:([A-D]))(?![\w'’])|([a-d])\s*(?=[.):\]]|$))",
    re.IGNORECASE | re.MULTILINE,
)
_PAREN_LETTER = re.compile(r"\(\s*([A-Da-d])\s*\)")
_CLOSE_LETTER = re.compile(r"(?:^|(?<=\s))([A-D])\)", re.MULTILINE)
_BARE_LETTER = re.compile(r"^\W*([A-D])\W*$")


def parse_option(reply: Reply | str) -> tuple[int | None, str | None]:
    """(0-based option, problem). Structured data first, then "Answer: (C)" / "Answer: C", then
    a single "(C)" or "C)", or a bare letter. Several different letters without "Answer:" is a
    problem; a lower-case "a" in prose is the article, not an option."""
    text = reply if isinstance(reply, str) else reply.text
    data = None if isinstance(reply, str) else reply.data
    if isinstance(data, dict) and isinstance(data.get("answer"), str):
        letter = data["answer"].strip().strip("()").upper()
        if letter in OPTION_LETTERS:
            return OPTION_LETTERS.index(letter), None
    m = _ANSWER_LETTER.search(text)
    if m:
        return OPTION_LETTERS.index(next(g for g in m.groups() if g).upper()), None
    letters = {x.upper() for x in _PAREN_LETTER.findall(text)} | set(_CLOSE_LETTER.findall(text))
    if len(letters) == 1:
        return OPTION_LETTERS.index(letters.pop()), None
    m = _BARE_LETTER.match(text)
    if m:
        return OPTION_LETTERS.index(m.group(1)), None
    if len(letters) > 1:
        return None, f"the reply names several options ({', '.join(sorted(letters))})"
    return None, "no option (A), (B), (C) or (D) found in the reply"


@dataclass
class AnswerOutcome(ReplyTally):  # endpoint_failed: set by ask_until_usable when the endpoint was down
    text: str = ""
    option: int | None = None  # multiple choice only


async def answer_question(client: LLMClient, context: str, question: Question) -> AnswerOutcome:
    out = AnswerOutcome()
    if question.multiple_choice:
        prompt = render_prompt("qa_answer_mc", context=context, question=question.with_options())
        option = await ask_until_usable(
            client,
            prompt,
            parse=parse_option,
            schema=OPTION_SCHEMA,
            max_tokens=FREE_MAX_TOKENS,
            purpose="answer",
            tally=out,
            instruction='Answer again with exactly one option, like "Answer: (C)", or JSON {"answer": "C"}.',
        )
        out.option = option
        out.text = out.replies[-1] if out.replies else ""
        return out
    prompt = render_prompt("answer", memory=context, question=question.text)
    try:
        reply = await client.complete(prompt, purpose="answer", max_tokens=FREE_MAX_TOKENS)
    except ModelCallError as exc:
        out.failures, out.problem = 1, str(exc)
        return out
    out.calls, out.text = 1, reply.text.strip()
    if not out.text:
        out.failures, out.problem = 1, "empty answer"
    return out
