"""``webagent ui``: a local web page on the package's API (docs/ui.md). ``app`` serves it
(Starlette + uvicorn, behind ``guard``'s token and origin checks), ``routes`` renders the pages
(``templates/``), ``jobs`` starts runs, replays and teach sessions, ``live`` runs them one at a
time in a thread each and keeps what they report for the page to stream."""
