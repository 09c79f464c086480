"""Procedural memory: a finished run replayed without the model, repairing
only the steps whose page or element changed.

Modules: ``runner`` (the replay and its repairs, each step recorded as a run's is), ``store``
(saved workflows under ``$WEBAGENT_HOME/workflows``), ``report`` (report.html with each step
marked). What a workflow is and how its elements are found again is ``webagent.trace``
(``workflow``, ``params``, ``fingerprint``, ``match``); the commands are ``webagent.cli_replay``
(``webagent replay`` and ``webagent workflows``).
"""
