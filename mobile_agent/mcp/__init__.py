"""The farm as an MCP server (`mobile-agent mcp`): phones and tasks as tools for any agent, with the safety gate
and the recorder in front. Built on the official MCP Python SDK (the ``mcp`` extra), imported absolutely."""
