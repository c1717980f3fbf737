"""The CLI prints what the panes show: both render the same view models from the engine.

`workbench sync status` lists every problem the Team pane lists, each with its fix; `review
list` carries the facts the Review pane marks (changed since, secret refusal) and never a
secret the pane redacts.
"""

from __future__ import annotations

import json
from pathlib import Path

from secretgen import make_token
from textual.widgets import OptionList, Static

from tests.ui import test_review_pane as review_ui
from tests.ui import test_team_pane as team_ui
from workbench.cli import main
from workbench.ui.panes.review import ReviewPane
from workbench.ui.panes.team import TeamSyncPane

BARE_PROBLEMS = ["No github.com remote", "No team server", "No team token"]


def cli(capsys, *argv: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def bare_project(sample, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """No github.com remote, no server, no token: nothing sync needs is there."""
    (Path(sample.project_root) / ".git" / "config").write_text("[core]\n\tbare = false\n")
    monkeypatch.delenv("TEAM_MEMORY_SYNC_URL", raising=False)
    monkeypatch.delenv("WORKBENCH_TEAM_TOKEN", raising=False)


async def test_sync_status_lists_every_problem_the_team_pane_lists(
    install_sample, monkeypatch, capsys
):
    sample = install_sample("healthy")
    bare_project(sample, monkeypatch)

    code, out, err = cli(capsys, "sync", "status", "--json")
    data = json.loads(out)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "github.com" in err
    assert [p["problem"] for p in data["problems"]] == BARE_PROBLEMS
    assert data["available"] is False
    # The local side is still reported: every team file waits for a first push.
    assert data["local_entries"] == len(data["pending"]) > 0

    code, text, _ = cli(capsys, "sync", "status")
    assert code == 2

    app = team_ui.EngineHarness(team_ui.open_engine(sample), lambda: TeamSyncPane(id="team"))
    async with app.run_test(size=team_ui.SIZE) as pilot:
        await team_ui.settle(app, pilot)
        pane = app.query_one(TeamSyncPane)
        notices = team_ui.text_of(pane, ".team-notices")
    flat_text, flat_notices = " ".join(text.split()), " ".join(notices.split())
    for problem in data["problems"]:
        line = f"✖ {problem['problem']}: {problem['fix']}"
        assert " ".join(line.split()) in flat_notices
        assert " ".join(line.split()) in flat_text


async def test_review_list_carries_the_facts_the_review_pane_marks(install_sample, capsys):
    sample = install_sample("healthy")
    from workbench.engine import Engine

    engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
    memory = Path(engine.locations.memory_dir)
    token = make_token("github-pat", seed="agreement")
    target = memory / "user_role.md"
    review_ui.propose(engine, ("user_role.md", target.read_text() + "\nMoved teams.\n"))
    review_ui.propose(
        engine,
        ("team/reference_ci.md", f"---\nname: CI\ntype: reference\n---\n\nCI uses {token}.\n"),
        source="dream",
    )
    target.write_text(target.read_text() + "\nEdited by hand meanwhile.\n")

    code, out, _ = cli(capsys, "review", "list", "--json")
    assert code == 0 and token not in out
    listed = {item["path"]: item for item in json.loads(out)}
    assert listed["user_role.md"]["changed_since"] is True
    assert listed["user_role.md"]["secret_refusal"] is None
    assert listed["team/reference_ci.md"]["changed_since"] is False
    assert "secret" in listed["team/reference_ci.md"]["secret_refusal"]
    assert listed["team/reference_ci.md"]["hidden_secrets"] == 1

    code, text, _ = cli(capsys, "review", "list")
    assert code == 0 and token not in text
    assert text.count("changed since") == 1 and text.count("secret refusal") == 1

    app = review_ui.EngineHarness(engine, lambda: ReviewPane(id="review"))
    async with app.run_test(size=review_ui.SIZE) as pilot:
        await review_ui.settle(app, pilot)
        pane = app.query_one(ReviewPane)
        shown = {item.path: item for item in pane.proposals}
        options = pane.query_one(OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        detail = str(pane.query_one(".review-detail", Static).render())
    assert shown.keys() == listed.keys()
    for path, item in shown.items():
        assert item.to_json() == listed[path]
    assert sum("▲ changed since" in p for p in prompts) == 1
    assert sum("✖ holds a secret" in p for p in prompts) == 1
    assert detail
