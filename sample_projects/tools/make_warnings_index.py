"""Write sample_projects/warnings/memory/MEMORY.md: an index that trips every index warning.

It links the sample's memory files, a few files that no longer exist, and then a long section
of notes pasted straight into the index (the habit that pushes real indexes past 200 lines and
25,000 characters). Deterministic: running it twice gives the same file.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parent / "warnings" / "memory" / "MEMORY.md"

ENTRIES = [
    (
        "Background",
        "user_background.md",
        "long-time maintainer of the PHP billing monolith, new to the Python services",
    ),
    (
        "Invoice numbers are gapless",
        "feedback_invoice_numbering.md",
        "allocate invoice numbers last, in their own transaction",
    ),
    (
        "No Friday deploys",
        "feedback_no_friday_deploys.md",
        "never deploy billing on Fridays or before holidays",
    ),
    ("Tax engine rewrite", "project_tax_engine_rewrite.md", "tax_v2 flag; Python port of lib/Tax"),
    (
        "VAT rates 2026",
        "project_vat_rates_2026.md",
        "config/vat/2026.yaml; Estonia 24% from 2026-07-01",
    ),
    (
        "Billing database",
        "reference_billing_db.md",
        "billing-db-01 primary, reports on replicas only",
    ),
    (
        "Legacy cron jobs",
        "reference_legacy_cron.md",
        "nightly invoice run, dunning and ledger export on billing-app-01",
    ),
    ("Retry payments", "feedback_broken_yaml.md", "at most three retries for failed card payments"),
    ("Dunning schedule", "project_unclosed_frontmatter.md", "day 3, 10 and 24 after the due date"),
    ("Random notes", "notes_no_frontmatter.md", "credit note numbering"),
    ("Money rounding", "feedback_type_case.md", "round once at the invoice total"),
    ("Currency support", "project_currency_support.md", "26 currencies, ECB reference rates"),
    (
        "Internal API catalogue",
        "reference_api_catalogue.md",
        "every internal endpoint with scopes and quirks",
    ),
    ("Legacy export format", "legacy_export.md", "Windows-1252 ledger export"),
    ("Ledger export deadline", "project_missing_type.md", "third working day of the month"),
    ("Old refund rules", "feedback_refund_rules.md", "superseded by the 2026 refund policy"),
    ("Magento integration", "project_magento_sync.md", "shop sync retired in 2025"),
    ("Wiki links", "reference_old_wiki.md", "the wiki moved to Confluence"),
    ("Pagination quirks", "reference_pagination.md", "offset pagination on the v0 API"),
    ("PDF templates", "project_pdf_templates.md", "invoice PDF templates in the design repo"),
]

TOPICS = [
    (
        "invoice run",
        "the nightly invoice run starts at 01:30 CET and must finish before the 06:00 export",
    ),
    (
        "dunning",
        "dunning e-mails are sent by the cron job, not by the queue worker, because the queue drops messages older than a day",
    ),
    (
        "credit notes",
        "credit notes reuse the invoice sequence with a CN- prefix, and auditors check both series together",
    ),
    (
        "tax_v2",
        "tax_v2 is only enabled for the EE and LV entities; everything else still runs the PHP engine",
    ),
    (
        "ledger",
        "the ledger export job writes Windows-1252 files that the accounting tool imports at 07:00",
    ),
    (
        "refunds",
        "refunds above 5,000 EUR need a second approval from finance before the payment provider call",
    ),
    (
        "currencies",
        "currency conversion always uses the ECB reference rate of the invoice date, never live rates",
    ),
    (
        "replicas",
        "reports run on the replicas; the primary rejects long-running SELECTs after 30 seconds",
    ),
    (
        "pdf",
        "invoice PDFs are rendered by wkhtmltopdf on billing-app-02 and cached in the object store for 10 years",
    ),
    (
        "webhooks",
        "payment provider webhooks are verified with the signing secret from the vault and retried for 3 days",
    ),
]
SUFFIXES = [
    "Ask Marta before changing anything here.",
    "This came up again during the last audit.",
    "Finance depends on this behaviour; keep it stable.",
    "See the runbook for the recovery steps.",
    "The Python port keeps the same behaviour on purpose.",
]


def build() -> str:
    lines = ["# Billing memory index", "", "## Memory files"]
    for title, target, hook in ENTRIES:
        lines.append(f"- [{title}]({target}) — {hook}")
    lines += ["", "## Notes pasted from old sessions (should live in topic files)", ""]
    number = 0
    while len(lines) < 248:
        topic, fact = TOPICS[number % len(TOPICS)]
        suffix = SUFFIXES[number % len(SUFFIXES)]
        round_no = number // len(TOPICS) + 1
        line = f"- {topic} (note {round_no}): {fact}. {suffix}"
        if number % 23 == 7:
            line += (
                " Longer context: this was discussed across several sessions and the conclusion was"
                " recorded here instead of in a topic file, which is why the index keeps growing."
            )
        lines.append(line)
        number += 1
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    TARGET.write_text(build(), encoding="utf-8")
    text = TARGET.read_text(encoding="utf-8").strip()
    print(f"{TARGET}: {len(text.splitlines())} lines, {len(text)} characters")
