"""The live web agent: observe → snippets → gists → ReadAgent-P look-up → action
→ execute, with a trace, an HTML report and Mind2Web-layout records.

Modules: ``loop`` (the steps and when to stop), ``decide`` (the web memory and the action
prompt on one observation), ``outcome`` (an action carried out, and what it changed), ``fill``
(a FILL's fields), ``elements`` (what an id stands for: description, box, attributes),
``episode`` (one task run to the site's verdict: any page's, the demo shop's in
``demo_episode``, an evaluator's), ``report`` (report.html), ``record`` (Mind2Web records),
``teach`` (a person's demonstration as a run's trace). A step's record and the trace
folder are ``webagent.trace``; the ``run`` and ``teach`` commands are ``webagent.cli_run`` and
``webagent.cli_teach``. The MiniWoB++ benchmark that drives this loop is ``webagent.miniwob``.
"""

from webagent.agent import elements
from webagent.agent.act import to_browser_action
from webagent.agent.decide import decide_page
from webagent.agent.loop import AgentOptions, AgentResult, run_agent

# what replay (above the agent) uses of it: the options, one decision on one page, an action's browser action
__all__ = ["AgentOptions", "AgentResult", "decide_page", "elements", "run_agent", "to_browser_action"]
