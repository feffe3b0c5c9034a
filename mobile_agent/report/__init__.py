"""Reports and exports of recorded episodes: HTML reports, training data, action overlays on screenshots."""

from mobile_agent.report.draw import annotated_thumbnail, draw_action
from mobile_agent.report.html import render_episode_report, render_run_report, write_report

__all__ = ["annotated_thumbnail", "draw_action", "render_episode_report", "render_run_report", "write_report"]
