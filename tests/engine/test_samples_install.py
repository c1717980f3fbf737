"""Installing a sample project: its daily logs are named for the day their age gives them."""

from __future__ import annotations

from datetime import datetime, timedelta

from workbench.engine.samples import install_sample

DAY = 86_400.0


def _logs(memory_dir):  # type: ignore[no-untyped-def]
    return sorted(p.relative_to(memory_dir).as_posix() for p in (memory_dir / "logs").rglob("*.md"))


def test_logs_are_named_for_the_day_their_age_puts_them_on(tmp_path):
    # Installed 40 days after the sample was made: the log that is 10 days old is named for
    # that day, not for the day it had when the sample was written.
    now = datetime(2027, 1, 9, 12, 0).timestamp()  # local noon, far from midnight
    sample = install_sample("warnings", tmp_path, now=now)
    ten, forty_seven = (datetime.fromtimestamp(now) - timedelta(days=d) for d in (10, 47))
    assert _logs(sample.memory_dir) == sorted(
        f"logs/{day:%Y/%m/%Y-%m-%d}.md" for day in (ten, forty_seven)
    )
    newest = sample.memory_dir / f"logs/{ten:%Y/%m/%Y-%m-%d}.md"
    assert abs(newest.stat().st_mtime - (now - 10 * DAY)) < 1
    assert "Estonia VAT" in newest.read_text(encoding="utf-8")
    # No folder of the old names is left behind.
    assert sorted(p.name for p in (sample.memory_dir / "logs").iterdir()) == sorted(
        {f"{ten:%Y}", f"{forty_seven:%Y}"}
    )


def test_installed_at_the_samples_own_date_the_names_stand(tmp_path):
    now = datetime(2026, 11, 30, 12, 0).timestamp()
    sample = install_sample("healthy", tmp_path, now=now)
    assert _logs(sample.memory_dir) == ["logs/2026/11/2026-11-27.md", "logs/2026/11/2026-11-28.md"]
