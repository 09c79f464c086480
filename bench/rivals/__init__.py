"""What webagent is raced against, each from its own code: the peer agents (browser-use,
AgentLab's GenericAgent on BrowserGym) with their harnesses, their observations, and an
independent snippet split. Modules that run in a rival's own venv (README.md) import only the
standard library, the rival's packages and each other, never webagent."""
