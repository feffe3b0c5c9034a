"""``mobile-agent sim model``: run the simulated model endpoint until Ctrl-C."""

from __future__ import annotations

import threading
from pathlib import Path

import typer

from mobile_agent.errors import UserError
from mobile_agent.model.families import DEFAULT_FAMILY, FAMILIES
from mobile_agent.sim.servers.model_server import SimModelServer


def _model_families(pairs: list[str]) -> dict[str, str]:
    """``["ui-tars-1.5-7b=ui-tars"]`` -> ``{"ui-tars-1.5-7b": "ui-tars"}``; a pair without '=' is a UserError."""
    out: dict[str, str] = {}
    for pair in pairs:
        model, sep, family = pair.partition("=")
        if not sep or not model.strip() or not family.strip():
            raise UserError(
                f"--serve {pair!r} is not MODEL=FAMILY", hint="e.g. --serve ui-tars-1.5-7b=ui-tars"
            )
        out[model.strip()] = family.strip()
    return out


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
    serve: list[str] = typer.Option(
        [],
        "--serve",
        metavar="MODEL=FAMILY",
        help="Answer requests for the model MODEL in FAMILY's format (repeatable; other models: --family).",
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
        model_families=_model_families(serve),
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
