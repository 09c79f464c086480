"""Procedural memory: a finished run replayed without the model, repairing
only the steps whose page or element changed.

Modules: ``fingerprint`` (what an element is, across browser sessions), ``match`` (find
it again on a live page), ``params`` (typed values as named parameters), ``workflow``
(a trace folder as a program: ``workflow.json``), ``runner`` (the replay and its
repairs), ``store`` (saved workflows under ``$WEBAGENT_HOME/workflows``), ``report``
(report.html with each step marked), ``cli`` (``webagent replay`` and ``webagent workflows``).
"""
