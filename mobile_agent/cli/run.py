"""`mobile-agent run TASK`: one task on one phone, every step printed as it is recorded."""

from __future__ import annotations

import typer

from mobile_agent.agent.config import AgentConfig, NoUser
from mobile_agent.agent.runtime import run_task
from mobile_agent.cli.apps import POPUP_RULES_HELP, use_popup_rules
from mobile_agent.cli.episodes import print_json
from mobile_agent.cli.safety import ALLOW_HELP, DENY_HELP, POLICY_HELP, policy_from_options
from mobile_agent.cli.terminal import TerminalUser, print_outcome, print_step
from mobile_agent.errors import MobileAgentError, UserError
from mobile_agent.model.base import PromptOptions
from mobile_agent.model.client import ModelClient
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.labels import Critic


def critic_from_options(url: str | None, model: str | None, reasks: int, fail_closed: bool) -> Critic | None:
    """The critic the --critic options describe (None without --critic); the model defaults to the first served."""
    if not url:
        return None
    if model is None:
        try:
            served = ModelClient([url], "probe", timeout=15.0, max_retries=1).list_models()
        except MobileAgentError:
            served = []
        if not served and fail_closed:
            raise UserError(
                f"the critic at {url} lists no model", "pass --critic-model, or check the endpoint"
            )
        model = served[0] if served else "critic"
    return Critic(ModelClient([url], model, timeout=60.0), fail_closed=fail_closed, max_reasks=reasks)


def run_command(
    task: str = typer.Argument(..., help="What the agent should do, in plain words."),
    device: str | None = typer.Option(
        None, "--device", "-d", help="Phone serial (default: ANDROID_SERIAL, else the only attached phone)."
    ),
    adb: str | None = typer.Option(
        None, "--adb", help="adb server HOST:PORT (default: MOBILE_AGENT_ADB, ADB_SERVER_SOCKET, ...)."
    ),
    base_url: list[str] = typer.Option(
        [], "--base-url", help="OpenAI-compatible endpoint(s) (default: http://127.0.0.1:8000/v1)."
    ),
    model: str | None = typer.Option(None, "--model", help="Model name served there (default: ui-venus-2)."),
    family: str | None = typer.Option(None, "--family", help="Output format family (default: ui-venus-2)."),
    max_steps: int = typer.Option(50, "--max-steps", min=1, help="Stop after this many steps."),
    timeout: float = typer.Option(900.0, "--timeout", min=1, help="Episode timeout in seconds."),
    step_timeout: float = typer.Option(
        300.0, "--step-timeout", min=1, help="No step (model request with retries, phone calls) waits longer."
    ),
    history_turns: int = typer.Option(8, "--history-turns", min=0, help="Earlier steps shown to the model."),
    history_images: int = typer.Option(
        2,
        "--history-images",
        min=0,
        help="Of those, how many keep their screenshot (bytes per step grow with it).",
    ),
    db: str | None = typer.Option(
        None, "--db", envvar="MOBILE_AGENT_DB", help="SQLAlchemy URL of the store."
    ),
    apps_dir: str | None = typer.Option(
        None, "--apps-dir", envvar="MOBILE_AGENT_APPS", help="Extra manifests."
    ),
    no_popup_rules: bool = typer.Option(
        False, "--no-popup-rules", help="Let the model handle popups itself."
    ),
    popup_rules: list[str] = typer.Option([], "--popup-rules", help=POPUP_RULES_HELP),
    policy: list[str] | None = typer.Option(None, "--policy", help=POLICY_HELP),
    allow: list[str] | None = typer.Option(None, "--allow", help=ALLOW_HELP),
    deny: list[str] | None = typer.Option(None, "--deny", help=DENY_HELP),
    critic: str | None = typer.Option(
        None,
        "--critic",
        envvar="MOBILE_AGENT_CRITIC",
        help="Endpoint of a critic model that labels each action first.",
    ),
    critic_model: str | None = typer.Option(
        None, "--critic-model", help="Critic model name (default: the first served)."
    ),
    critic_reasks: int = typer.Option(
        2, "--critic-reasks", min=0, help="Re-ask the model this often on 'wrong'."
    ),
    critic_fail_closed: bool = typer.Option(
        False, "--critic-fail-closed", help="Stop the episode when the critic cannot be asked."
    ),
    non_interactive: bool = typer.Option(
        False, "--non-interactive", help="Never ask the terminal; end as needs_user."
    ),
    force: bool = typer.Option(
        False, "--force", help="Take the phone over even while another live run or worker holds it."
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print one JSON object at the end (episode id, phone, outcome, store), no step lines.",
    ),
) -> None:
    """Run one task on one phone and record every step."""
    config = AgentConfig(
        max_steps=max_steps,
        timeout_s=timeout,
        step_timeout_s=step_timeout,
        popup_rules=not no_popup_rules,
        prompt=PromptOptions(max_history_turns=history_turns, history_images=history_images),
    )
    use_popup_rules(popup_rules)  # a bad subscription is a one-line error before the phone is touched
    user = NoUser() if non_interactive else TerminalUser()
    safety = policy_from_options(policy, allow, deny)
    reviewer = critic_from_options(critic, critic_model, critic_reasks, critic_fail_closed)
    from mobile_agent.settings.values import load_settings

    store = TrajectoryStore.open(load_settings(db=db).db)  # ours, so we can say where the trajectory is
    try:
        result = run_task(
            task,
            device=device,
            adb=adb,
            base_url=base_url,
            model=model,
            family=family,
            db=db,
            apps_dir=apps_dir,
            config=config,
            user=user,
            on_step=None if as_json else print_step,
            safety=safety,
            critic=reviewer,
            force=force,
            store=store,
        )
        location, serial = store.describe_location(), store.episode(result.episode_id).device
    finally:
        store.close()
    if as_json:
        print_json(
            {
                "episode_id": result.episode_id,
                "device": serial,
                "outcome": str(result.outcome),
                "ok": result.ok,
                "steps": result.steps,
                "answer": result.answer,
                "detail": result.detail,
                "store": location,
            }
        )
    else:
        print_outcome(result, location)
    raise typer.Exit(0 if result.ok else 1)


__all__ = ["critic_from_options", "run_command"]
