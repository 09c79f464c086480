"""Words the model reads and writes, counted per question and per built artefact.

Token counters depend on the endpoint and are zero for replies served from the cache;
the paper's cost accounting (section 3.3) counts words consumed by the LLM, which is the
same whether a reply came from the model, the cache or a shared request.
"""

from __future__ import annotations

from webagent.llm.client import EndpointUnavailable, LLMClient, Reply, as_messages


class CountingClient:
    """An LLMClient view (scoped: its own Usage) that also counts calls and words."""

    def __init__(self, client: LLMClient):
        self._client = client.scoped()
        self.calls = 0
        self.prompt_words = 0
        self.reply_words = 0
        self.endpoint_failed = False  # a call failed because the endpoint was down, not the model

    def __getattr__(self, name: str):
        return getattr(self._client, name)

    def scoped(self) -> CountingClient:
        return CountingClient(self._client)

    async def complete(self, prompt, **kwargs) -> Reply:
        try:
            reply = await self._client.complete(prompt, **kwargs)
        except EndpointUnavailable:
            self.endpoint_failed = True
            raise
        self.calls += 1
        self.prompt_words += sum(len(str(m.get("content", "")).split()) for m in as_messages(prompt))
        self.reply_words += len(reply.text.split())
        return reply

    def counts(self) -> dict:
        t = self._client.usage.total
        return {
            "calls": self.calls,
            "model_calls": t.calls,
            "cached_calls": t.cached_calls,
            "prompt_words": self.prompt_words,
            "reply_words": self.reply_words,
            "prompt_tokens": t.needed_prompt_tokens,
            "completion_tokens": t.needed_completion_tokens,
        }
