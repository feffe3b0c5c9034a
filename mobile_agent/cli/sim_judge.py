"""``mobile-agent sim judge``: serve the scripted judge (OpenAI-compatible) until Ctrl-C, for `verify --judge`."""

from __future__ import annotations

import threading

import typer

from mobile_agent.sim.servers.judge_server import JudgeScript, ScriptedJudgeServer

VERDICTS = ("complete", "partial", "infeasible", "failed")
LABELS = ("correct", "exploratory", "ineffective", "wrong")


def judge_command(
    port: int = typer.Option(18001, "--port", help="TCP port to listen on (0 picks a free one)."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to bind; keep loopback unless you mean it."
    ),
    model: str = typer.Option("scripted-judge", "--model", help="Model name the endpoint serves."),
    verdict: str = typer.Option(
        "complete", "--verdict", help=f"Verdict for every trajectory: {', '.join(VERDICTS)}."
    ),
    label: str = typer.Option("correct", "--label", help=f"Label for every step: {', '.join(LABELS)}."),
    trust_agent: bool = typer.Option(
        False,
        "--trust-agent",
        help="Say complete whenever the agent stopped as finished or answered (a coarse judge), failed otherwise.",
    ),
) -> None:
    """Serve a scripted judge model over the OpenAI chat-completions API (for `mobile-agent verify --judge`)."""
    from mobile_agent.errors import UserError

    if verdict not in VERDICTS:
        raise UserError(f"--verdict {verdict!r} is not a verdict", f"use one of: {', '.join(VERDICTS)}")
    if label not in LABELS:
        raise UserError(f"--label {label!r} is not a step label", f"use one of: {', '.join(LABELS)}")
    script = JudgeScript(default_verdict=verdict, default_label=label, trust_agent=trust_agent)
    server = ScriptedJudgeServer(script, model=model, host=host, port=port).start()
    typer.echo(
        f"scripted judge {model!r} at {server.base_url} (every verdict: {verdict}, every step: {label})"
    )
    typer.echo(f"try: mobile-agent verify EPISODE --judge {server.base_url}")
    typer.echo("press Ctrl-C to stop")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


__all__ = ["judge_command"]
