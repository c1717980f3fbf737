"""The lint helper for descriptions recall can never match."""

from __future__ import annotations

from workbench.engine.recall.description_lint import description_problem


def test_missing_generic_and_duplicate_descriptions(memory_folder):
    f = memory_folder
    f.add("a.md", "Stripe webhooks are retried for three days")
    f.add("b.md", "misc notes")
    f.add("c.md", None)
    f.add("d.md", "Stripe webhooks are retried for three days!")
    f.add("logs/2026/01/2026-01-01.md", raw="- 10:00 something\n")
    findings = f.engine().recall.lint_descriptions()
    by_path = {x.path: x.rule for x in findings}
    assert by_path == {
        "b.md": "recall-description-generic",
        "c.md": "recall-description-missing",
        "d.md": "recall-description-duplicate",
    }
    assert all(x.severity == "warning" for x in findings)
    assert "a.md" in next(x.message for x in findings if x.path == "d.md")


def test_description_problem_rules():
    assert description_problem("Deploy freeze for checkout in December") is None
    assert description_problem("   ")[0] == "recall-description-missing"
    assert description_problem("important stuff to remember")[0] == "recall-description-generic"
    assert description_problem("TODO 2026")[0] == "recall-description-generic"
