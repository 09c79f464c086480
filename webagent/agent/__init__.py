"""The live web agent: observe → snippets → gists → ReadAgent-P look-up → action
→ execute, with a trace, an HTML report and Mind2Web-layout records.

Modules: ``loop`` (the steps and when to stop), ``decide`` (the web memory and the action
prompt on one observation), ``elements`` (what an id stands for: description, box,
attributes), ``live`` (a run on its browser, endpoint and trace), ``trace`` (steps.jsonl +
screenshots), ``report`` (report.html), ``record`` (Mind2Web records), ``cli`` (the ``run``
command). The MiniWoB++ benchmark that drives this loop is ``webagent.miniwob``.
"""

from webagent.agent.loop import AgentOptions, AgentResult, run_agent

__all__ = ["AgentOptions", "AgentResult", "run_agent"]
