"""``mobile-agent sim model``: run the simulated model endpoint until Ctrl-C."""

from __future__ import annotations

import threading
from pathlib import Path

import typer

from mobile_agent.model.families import DEFAULT_FAMILY, FAMILIES
from mobile_agent.sim.servers.model_server import SimModelServer


def model_command(
    port: int = typer.Option(18000, help="TCP port to listen on (0 picks a free one)."),
    family: str = typer.Option(DEFAULT_FAMILY, help=f"Reply format to speak: {', '.join(FAMILIES)}."),
    latency_ms: int = typer.Option(0, min=0, help="Extra delay before every answer, in milliseconds."),
    host: str = typer.Option("127.0.0.1", help="Address to bind; keep loopback unless you mean it."),
    scripts: Path | None = typer.Option(
        None, help="A script file or folder of *.yaml scripts (default: the shipped scenarios)."
    ),
    split_reasoning: bool = typer.Option(
        False, help="Return the <think> part separately, like vLLM's reasoning parser."
    ),
    reasoning_field: str = typer.Option(
        "reasoning",
        help="Message field for the split-off thinking: reasoning (current vLLM) or reasoning_content (older).",
    ),
    closed_answer: bool = typer.Option(
        False,
        help="AutoGLM: close </answer> (the prompt's form); by default it is left off, like the real model.",
    ),
) -> None:
    """Serve a scripted GUI model over the OpenAI chat-completions API."""
    server = SimModelServer(
        family=family,
        scripts=[scripts] if scripts is not None else None,
        latency_ms=latency_ms,
        host=host,
        port=port,
        split_reasoning=split_reasoning,
        reasoning_field=reasoning_field,
        closed_answer=closed_answer,
    ).start()
    typer.echo(
        f"simulated {server.family.name} model with {len(server.scripts)} scripts at {server.base_url}"
    )
    typer.echo("press Ctrl-C to stop")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


__all__ = ["model_command"]
