"""`mobile-agent run TASK`: one task on one phone, every step printed as it is recorded."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mobile_agent.cli.completion import complete_family, complete_serial
from mobile_agent.cli.gc_hold import CollectorHold
from mobile_agent.cli.popup_rules import POPUP_CATEGORIES_HELP, POPUP_RULES_HELP, use_popup_rules
from mobile_agent.cli.safety import ALLOW_HELP, DENY_HELP, POLICY_HELP, policy_from_options
from mobile_agent.cli.terminal import (
    TerminalUser,
    booked_until,
    interruption_said,
    print_booked,
    print_outcome,
    print_step,
)
from mobile_agent.errors import MobileAgentError, UserError

if TYPE_CHECKING:
    from mobile_agent.verify.labels import Critic


def critic_from_options(url: str | None, model: str | None, reasks: int, fail_closed: bool) -> Critic | None:
    """The critic the --critic options describe (None without --critic); the model defaults to the first served."""
    if not url:
        return None
    from mobile_agent.model.client import ModelClient
    from mobile_agent.verify.labels import Critic

    if model is None:
        try:
            served = ModelClient(
                [url], "probe", timeout=5.0, max_retries=0
            ).list_models()  # before any deadline
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
        None,
        "--device",
        "-d",
        autocompletion=complete_serial,
        help="Phone serial (default: ANDROID_SERIAL, else the only attached phone).",
    ),
    adb: str | None = typer.Option(
        None, "--adb", help="adb server HOST:PORT (default: MOBILE_AGENT_ADB, ADB_SERVER_SOCKET, ...)."
    ),
    base_url: list[str] = typer.Option(
        [], "--base-url", help="OpenAI-compatible endpoint(s) (default: http://127.0.0.1:8000/v1)."
    ),
    model: str | None = typer.Option(None, "--model", help="Model name served there (default: ui-venus-2)."),
    family: str | None = typer.Option(
        None, "--family", autocompletion=complete_family, help="Output format family (default: ui-venus-2)."
    ),
    max_steps: int = typer.Option(50, "--max-steps", min=1, help="Stop after this many steps."),
    timeout: float = typer.Option(900.0, "--timeout", min=1, help="Episode timeout in seconds."),
    step_timeout: float = typer.Option(
        300.0, "--step-timeout", min=1, help="No step (model request with retries, phone calls) waits longer."
    ),
    reconnect_wait: float = typer.Option(
        60.0,
        "--reconnect-wait",
        min=0,
        help="Seconds to wait for a phone that leaves the adb bus (a network phone is asked back with adb "
        "connect) before the episode ends error:device_lost; the step then starts again from a fresh screen.",
    ),
    history_turns: int = typer.Option(8, "--history-turns", min=0, help="Earlier steps shown to the model."),
    history_images: int = typer.Option(
        2,
        "--history-images",
        min=0,
        help="Of those, how many keep their screenshot (bytes per step grow with it).",
    ),
    history_scale: float | None = typer.Option(
        None, "--history-scale", help="Sides of history screenshots times this (0-1; default 1: as seen)."
    ),
    history_quality: int | None = typer.Option(
        None, "--history-quality", help="JPEG quality of history screenshots (1-95; default: the family's)."
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
    popup_categories: str | None = typer.Option(None, "--popup-categories", help=POPUP_CATEGORIES_HELP),
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
    stop_u2_server: bool = typer.Option(
        False,
        "--stop-u2-server",
        help="Stop the phone's uiautomator2 server when the run ends (it keeps running otherwise: the next run "
        "on the phone reuses it).",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print one JSON object at the end (episode id, phone, outcome, store), no step lines.",
    ),
) -> None:
    """Run one task on one phone and record every step."""
    with CollectorHold() as hold:  # start-up's objects live on; collecting them cost ~0.1 s before step one
        from mobile_agent.agent.config import AgentConfig, NoUser
        from mobile_agent.agent.runtime import run_task
        from mobile_agent.model.base import PromptOptions
        from mobile_agent.settings.values import load_settings
        from mobile_agent.store.store import TrajectoryStore

        frames = load_settings(history_scale=history_scale, history_quality=history_quality)
        config = AgentConfig(
            max_steps=max_steps,
            timeout_s=timeout,
            step_timeout_s=step_timeout,
            reconnect_wait_s=reconnect_wait,
            popup_rules=not no_popup_rules,
            prompt=PromptOptions(
                max_history_turns=history_turns,
                history_images=history_images,
                history_image_scale=frames.history_scale,
                history_image_quality=frames.history_quality,
            ),
        )
        use_popup_rules(popup_rules, popup_categories)  # a bad file: one line before the phone is touched
        user = NoUser() if non_interactive else TerminalUser(reserve_s=config.reserve_s)
        safety = policy_from_options(policy, allow, deny)
        reviewer = critic_from_options(critic, critic_model, critic_reasks, critic_fail_closed)
        store = TrajectoryStore.open(load_settings(db=db).db)  # ours, so we can say where the trajectory is
        try:
            with interruption_said():
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
                    on_step=hold.released_by(None if as_json else print_step),
                    safety=safety,
                    critic=reviewer,
                    force=force,
                    store=store,
                    stop_u2_server=stop_u2_server,
                )
            location, serial = store.describe_location(), store.episode(result.episode_id).device
            booked = booked_until(store, result.episode_id)
        finally:
            store.close()
        if as_json:
            from mobile_agent.cli.episodes import print_json

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
                    "booked_until": booked.isoformat() if booked else None,
                }
            )
        else:
            print_outcome(result, location)
            if booked is not None:
                print_booked(result.episode_id, serial, booked)
        raise typer.Exit(0 if result.ok else 1)


__all__ = ["critic_from_options", "run_command"]
