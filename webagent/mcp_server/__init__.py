"""``webagent mcp``: the package's API as a stdio MCP server (the official ``mcp`` SDK's
``MCPServer``, FastMCP's successor), for assistants that call tools over the Model Context
Protocol (docs/mcp.md).

- ``config``: what the person who installs the server decides when it starts (allowed sites,
  document folders, secrets, runs folder), from flags and a TOML file;
- ``policy``: the safety rules every tool call passes: allowed sites narrowed never widened,
  documents only from the allowed folders, secrets by name only and masked in every reply;
- ``tools``: the tools, each a call of ``webagent.api`` (or the skills and workflow stores);
- ``server``: the ``MCPServer`` with the tools, their descriptions and the masked log;
- ``cli``: the ``webagent mcp`` command.
"""
