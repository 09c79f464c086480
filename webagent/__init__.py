"""webagent: a web agent with ReadAgent-style gist memory, procedural memory (replay) and
document question answering, driven from Python.

    from webagent import Agent, replay, ask

    result = Agent('Buy the book "Night Trains" for Ada Lovelace with express shipping.',
                   url="http://127.0.0.1:8000/index.html",
                   base_url="http://localhost:8080/v1", model="qwen2.5-coder",  # or nothing: the embedded model
                   save_as="night-trains").run_sync()
    print(result.status, result.answer, result.final_url, result.usage["calls"], result.trace_dir)

    again = replay_sync("night-trains", params={"search_books": "Tea Gardens of Assam", "name": "Grace Hopper"})
    print(again.status, again.model_calls, again.replayed, again.repaired)

    answer = ask_sync("meeting.txt", "What was decided about the budget?", method="readagent-p")

``Agent.run()``, ``replay()`` and ``ask()`` are coroutines; ``run_sync()``,
``replay_sync()`` and ``ask_sync()`` wrap them in ``asyncio.run``. The model is one
of: ``llm=`` an ``LLMClient`` you built (e.g. ``webagent.llm.testing.fake_client``),
``base_url=`` + ``model=`` an OpenAI-compatible endpoint, ``model="fake:heuristic"``,
or nothing (the embedded llama.cpp server, ``gguf=`` to choose its file).
The API lives in ``webagent.api`` and is re-exported here; ``webagent run`` and
``webagent replay`` are built on it. Importing it loads nothing heavy: the browser, the
model client and the readers are imported on use.
"""

from webagent.api import Agent, Progress, RunResult, ask, ask_sync, default_trace_dir, replay, replay_sync  # noqa: F401 - also reachable as webagent.X, as before

__all__ = ["Agent", "RunResult", "ask", "ask_sync", "replay", "replay_sync"]

# ``webagent.replay`` is also the package of the replay modules, and importing a submodule
# binds it on its parent. It is imported here, once (it only holds a docstring), and the
# function bound after it, so that ``from webagent import replay`` is always the function.
_replay_function = replay
__import__("importlib").import_module("webagent.replay")
replay = _replay_function
