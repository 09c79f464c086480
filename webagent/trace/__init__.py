"""A run's trace and what is read back from it, shared by the live agent, replay, skills and
the real-app suite (below all of them: it imports none of them).

Modules: ``record`` (a step's record, ``StepRecord``, and the one function that builds it),
``writer`` (the trace folder: ``steps.jsonl``, screenshots, ``run.json``; secrets scrubbed),
``fingerprint`` (what an element is, across browser sessions), ``match`` (find it again on a
live page), ``params`` (typed values as named parameters), ``workflow`` (a trace folder as a
program: ``workflow.json``).
"""
