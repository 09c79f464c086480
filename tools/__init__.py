"""Repository tools, run from the root as modules (``.venv/bin/python -m tools.render_docs
--check``): the docs' tables (``render_docs``) and the Mind2Web-layout test fixtures
(``make_fixtures``)."""
