"""Write the sample projects' `transcripts/` folders: Claude Code sessions and their notes.

healthy/ (checkout-service)
    a mid-size session comfortably below every threshold, with session notes within limits,
    and a short older session.
warnings/ (legacy-billing)
    a session above the warning threshold and close to auto-compaction for Sonnet 4.6
    defaults, with session notes over 12,000 tokens and a section over 2,000;
    a session where `/compact` ran as session-memory compaction (a boundary with a preserved
    segment); and an older session with a manual compaction, an interruption and an API error.

The sessions are built with `workbench.devtools.synth.SessionBuilder`, so they have the
shapes of real 2.1.x transcripts: split streaming records sharing usage, hook progress lines,
file-history snapshots, tool results with `toolUseResult`. The prompt sizes come from the
usage records the way Claude Code writes them; the large sessions assume a system prompt with
several MCP servers' tools, which is why their context exceeds what the file itself holds.
Structured `toolUseResult` copies of long file contents are trimmed to their metadata to keep
the samples small. Deterministic: running it twice writes the same files.

    .venv/bin/python sample_projects/tools/make_transcripts.py [ROOT]
"""

from __future__ import annotations

import random
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from workbench.devtools.synth import SessionBuilder  # noqa: E402
from workbench.engine.context.session_memory import DEFAULT_TEMPLATE  # noqa: E402
from workbench.engine.context.tokens import rough_tokens_for_message  # noqa: E402

HEALTHY_CWD = "/home/dev/projects/checkout-service"
BILLING_CWD = "/home/dev/projects/legacy-billing"


# --- file contents ----------------------------------------------------------------------------


def ts_module(rng: random.Random, name: str, functions: int) -> str:
    """A plausible TypeScript module of the checkout service."""
    nouns = ["cart", "order", "payment", "coupon", "refund", "invoice", "customer", "session"]
    lines = [
        "import { Money, addCents } from '@acme/payments/money';",
        "import { db } from '../db';",
        "import { logger } from '../logger';",
        "",
    ]
    for i in range(functions):
        noun = rng.choice(nouns)
        fn = f"{rng.choice(['load', 'apply', 'settle', 'validate', 'price'])}{noun.title()}{i}"
        lines += [
            f"export async function {fn}(id: string, amount: Money): Promise<Money> {{",
            f"  const row = await db.{noun}s.findUnique({{ where: {{ id }} }});",
            f"  if (!row) throw new NotFoundError('{noun} ' + id);",
            f"  const total = addCents(amount, row.{noun}FeeCents ?? 0);",
            f"  logger.debug({{ {noun}: id, totalCents: total.cents }}, '{fn}');",
            "  return total;",
            "}",
            "",
        ]
    return "\n".join(lines)


def php_class(rng: random.Random, name: str, methods: int) -> str:
    """A plausible PHP class of the legacy billing monolith."""
    lines = ["<?php", "", "namespace Billing\\Tax;", "", f"final class {name}", "{"]
    for i in range(methods):
        country = rng.choice(["DE", "FR", "EE", "NL", "IT", "ES", "PL", "SE"])
        lines += [
            f"    public function rateFor{country}{i}(Invoice $invoice): string",
            "    {",
            f"        $rate = $this->rates->lookup('{country}', $invoice->issuedAt());",
            "        if ($invoice->isReverseCharge()) {",
            "            return '0.00';",
            "        }",
            "        return bcmul($invoice->netAmount(), $rate, 2);",
            "    }",
            "",
        ]
    lines.append("}")
    return "\n".join(lines)


def py_module(rng: random.Random, name: str, functions: int) -> str:
    """A plausible Python module of the tax engine port."""
    lines = [
        "from __future__ import annotations",
        "",
        "from decimal import Decimal",
        "",
        "from billing_py.tax.rates import RateTable",
        "",
    ]
    for i in range(functions):
        country = rng.choice(["de", "fr", "ee", "nl", "it", "es", "pl", "se"])
        lines += [
            f"def vat_{country}_{i}(net: Decimal, table: RateTable, *, b2b: bool) -> Decimal:",
            f'    """VAT for {country.upper()} under the 2026 OSS rules."""',
            "    if b2b:",
            "        return Decimal('0.00')",
            f"    return (net * table.rate('{country.upper()}')).quantize(Decimal('0.01'))",
            "",
        ]
    return "\n".join(lines)


def numbered(text: str) -> str:
    """The Read tool's rendering: right-aligned line numbers and an arrow."""
    return "\n".join(f"{i:>6}→{line}" for i, line in enumerate(text.split("\n"), 1))


def read(b: SessionBuilder, path: str, content: str, **kw: object) -> str:
    """A Read call whose structured result keeps only the file's metadata."""
    lines = content.count("\n") + 1
    return b.tool_call(
        "Read",
        {"file_path": path},
        numbered(content),
        tool_use_result={
            "type": "text",
            "file": {"filePath": path, "numLines": lines, "startLine": 1, "totalLines": lines},
        },
        **kw,  # type: ignore[arg-type]
    )


def bash(b: SessionBuilder, command: str, output: str, **kw: object) -> str:
    return b.tool_call(
        "Bash",
        {"command": command, "description": command.split()[0]},
        output,
        tool_use_result={"stdout": output, "stderr": "", "interrupted": False},
        **kw,  # type: ignore[arg-type]
    )


def edit(b: SessionBuilder, path: str, old: str, new: str, **kw: object) -> str:
    return b.tool_call(
        "Edit",
        {"file_path": path, "old_string": old, "new_string": new},
        f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet "
        f"of the edited file:\n{numbered(new)}",
        tool_use_result={"filePath": path, "oldString": old, "newString": new},
        hooks=3,
        **kw,  # type: ignore[arg-type]
    )


def grep(b: SessionBuilder, pattern: str, hits: list[str], **kw: object) -> str:
    return b.tool_call(
        "Grep",
        {"pattern": pattern, "output_mode": "content", "-n": True},
        "\n".join(hits),
        tool_use_result={"mode": "content", "numFiles": len(hits), "numLines": len(hits)},
        **kw,  # type: ignore[arg-type]
    )


def notes(sections: dict[str, str]) -> str:
    """Session notes in the template's layout with the given section bodies."""
    text = DEFAULT_TEMPLATE
    for header, body in sections.items():
        lines = text.split("\n")
        index = lines.index(header)
        lines.insert(index + 2, body)
        text = "\n".join(lines)
    return text


def command_wrappers(b: SessionBuilder) -> None:
    """The lines a local `/compact` command leaves after the summary."""
    b.user(
        "Caveat: these messages were produced by local commands the user ran; do not answer "
        "them unless asked to.",
        isMeta=True,
    )
    b.user(
        "<command-name>/compact</command-name>\n            <command-message>compact"
        "</command-message>\n            <command-args></command-args>"
    )
    b.user("<local-command-stdout>Compacted</local-command-stdout>")


def write_session(folder: Path, b: SessionBuilder, summary: str | None = None) -> None:
    b.write(folder / f"{b.session_id}.jsonl")
    if summary is not None:
        target = folder / b.session_id / "session-memory" / "summary.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(summary, encoding="utf-8")


# --- healthy ----------------------------------------------------------------------------------


def healthy_main() -> tuple[SessionBuilder, str]:
    rng = random.Random(101)
    b = SessionBuilder(
        session_id="2f9c1e4a-3b9d-4f0e-9a61-2d5c8e0b7f13",
        cwd=HEALTHY_CWD,
        model="claude-sonnet-4-6",
        git_branch="feat/idempotency-keys",
        slug="brisk-silver-ledger",
        start=datetime(2026, 11, 28, 9, 12, tzinfo=UTC),
        seed=11,
        system_prompt_tokens=31_500,
    )
    root = HEALTHY_CWD
    b.prompt(
        "Add idempotency keys to POST /v2/checkout so a retried request never charges twice. "
        "Store the key with the order and return the first response on replays."
    )
    read(
        b,
        f"{root}/apps/api/src/routes/checkout.ts",
        ts_module(rng, "checkout", 26),
        thinking="Start from the route handler to see where the charge happens.",
        text="Let me look at the checkout route first.",
    )
    grep(
        b,
        "idempotency",
        [
            f"{root}/packages/payments/src/stripe.ts:88:    idempotencyKey: opts.key,",
            f"{root}/docs/api/v2.md:142:Clients may send an Idempotency-Key header.",
        ],
    )
    read(b, f"{root}/packages/payments/src/stripe.ts", ts_module(rng, "stripe", 24))
    read(b, f"{root}/packages/payments/src/money.ts", ts_module(rng, "money", 14))
    read(b, f"{root}/apps/api/src/routes/orders.ts", ts_module(rng, "orders", 20))
    read(
        b,
        f"{root}/apps/api/src/db/schema.prisma",
        "model Order {\n" + "  id String @id\n" * 30 + "}",
    )
    b.reply(
        "Plan: (1) add an `idempotency_keys` table keyed by (merchant, key) holding the order id "
        "and the serialized response; (2) look the key up before charging; (3) pass the key on "
        "to Stripe as well. I'll write the migration first.",
        thinking="Keys must be scoped per merchant; store response body and status.",
    )
    b.prompt("Sounds good. Use pnpm for everything, and keep money in integer cents.")
    migration = (
        "CREATE TABLE idempotency_keys (\n  merchant_id text NOT NULL,\n  key text NOT NULL,\n"
        "  order_id text NOT NULL,\n  response_status int NOT NULL,\n  response_body jsonb NOT "
        "NULL,\n  created_at timestamptz NOT NULL DEFAULT now(),\n  PRIMARY KEY (merchant_id, "
        "key)\n);"
    )
    b.tool_call(
        "Write",
        {
            "file_path": f"{root}/apps/api/migrations/0042_idempotency_keys.sql",
            "content": migration,
        },
        f"File created successfully at: {root}/apps/api/migrations/0042_idempotency_keys.sql",
        text="Writing the migration.",
    )
    edit(
        b,
        f"{root}/apps/api/src/routes/checkout.ts",
        "  const charge = await payments.charge(order);",
        "  const replay = await idempotency.lookup(merchantId, key);\n"
        "  if (replay) return reply.code(replay.status).send(replay.body);\n"
        "  const charge = await payments.charge(order, { idempotencyKey: key });",
    )
    bash(
        b,
        "pnpm --filter api test -- checkout",
        "PASS src/routes/checkout.test.ts\n  ✓ charges once (41 ms)\n  ✓ replays the first "
        "response for a repeated key (12 ms)\n\nTests: 14 passed, 14 total",
    )
    bash(b, "pnpm --filter api lint", "✔ No problems found")
    b.reply(
        "Done: migration 0042, the lookup in the checkout route, and the key forwarded to Stripe. "
        "14 tests pass, including a new replay test."
    )
    b.system("turn_duration", durationMs=184_000)
    b.prompt("Also expire keys after 24 hours with the nightly job.")
    read(b, f"{root}/apps/api/src/jobs/nightly.ts", ts_module(rng, "nightly", 5))
    edit(
        b,
        f"{root}/apps/api/src/jobs/nightly.ts",
        "export const jobs = [purgeCarts];",
        "export const jobs = [purgeCarts, purgeIdempotencyKeys];",
    )
    bash(b, "pnpm --filter api test -- jobs", "Tests: 6 passed, 6 total")
    b.reply("Keys older than 24 hours are now purged nightly; the job tests pass.")
    summary = notes(
        {
            "# Session Title": "Idempotency keys for POST /v2/checkout",
            "# Current State": "Done: table, lookup, Stripe key, nightly purge (24 h). Next: "
            "document the Idempotency-Key header in docs/api/v2.md.",
            "# Task specification": "Retried checkout requests must never charge twice; replay "
            "the first response for a repeated key, scoped per merchant.",
            "# Files and Functions": "- apps/api/migrations/0042_idempotency_keys.sql: the table\n"
            "- apps/api/src/routes/checkout.ts: lookup before payments.charge\n"
            "- apps/api/src/jobs/nightly.ts: purgeIdempotencyKeys",
            "# Workflow": "pnpm --filter api test -- checkout; pnpm --filter api lint",
            "# Learnings": "Stripe also takes the key (idempotencyKey option), so a crash between "
            "charge and insert is still safe.",
            "# Worklog": "- read route and Stripe client\n- migration 0042\n- lookup + replay\n"
            "- nightly purge",
        }
    )
    return b, summary


def healthy_small() -> SessionBuilder:
    rng = random.Random(102)
    b = SessionBuilder(
        session_id="8b5f2d8e-61a7-4c3b-8e90-4a7d1c6f2e58",
        cwd=HEALTHY_CWD,
        model="claude-sonnet-4-6",
        git_branch="main",
        slug="calm-teal-harbor",
        start=datetime(2026, 11, 25, 15, 40, tzinfo=UTC),
        seed=12,
        system_prompt_tokens=17_600,
    )
    b.prompt("Why does the coupon e2e test fail on CI but not locally?")
    read(
        b,
        f"{HEALTHY_CWD}/apps/storefront/e2e/checkout.spec.ts",
        ts_module(rng, "spec", 4),
        thinking="Look for time-dependent assertions.",
    )
    bash(
        b,
        "pnpm --filter storefront e2e -- --grep 'applies coupon'",
        "1 failed\n  checkout.spec.ts:88 applies coupon: expected 'EXPIRED' to equal 'VALID'",
    )
    b.reply(
        "The expiry check reads the runner's clock; CI runners drift. The test is quarantined "
        "(CHK-482) until a fake clock is injected, so this failure is not a regression."
    )
    return b


# --- warnings ---------------------------------------------------------------------------------


def warnings_near_limit() -> tuple[SessionBuilder, str]:
    rng = random.Random(201)
    b = SessionBuilder(
        session_id="1e3a91c0-5d42-4b8f-a6e1-93c2d0f8b4a6",
        cwd=BILLING_CWD,
        model="claude-sonnet-4-6",
        git_branch="tax-v2-port",
        slug="heavy-amber-ledger",
        start=datetime(2026, 11, 29, 8, 30, tzinfo=UTC),
        seed=21,
        # A system prompt with the tools of several MCP servers plus a long CLAUDE.md.
        system_prompt_tokens=80_000,
    )
    b.prompt(
        "Port lib/Tax to billing-py/tax behind the tax_v2 flag. Start with the rate lookup and "
        "the reverse-charge rules, and keep results identical to the PHP engine."
    )
    php_files = [
        "RateTable",
        "ReverseCharge",
        "OssRules",
        "InvoiceTax",
        "Rounding",
        "CountryRates",
        "DigitalServices",
        "ExemptionList",
    ]
    for index, name in enumerate(php_files):
        read(
            b,
            f"{BILLING_CWD}/lib/Tax/{name}.php",
            php_class(rng, name, 40),
            thinking=f"{name}: note every special case before porting." if index % 2 else None,
            hooks=0,
        )
        if index % 3 == 2:
            b.reply(f"{name} and the classes before it are read; the rules are consistent so far.")
            b.prompt("Continue.")
    grep(
        b,
        "bcmul|bcadd",
        [f"{BILLING_CWD}/lib/Tax/{n}.php:{10 + i}: bcmul(...)" for i, n in enumerate(php_files)],
    )
    for index, name in enumerate(["rates", "reverse_charge", "oss", "invoice_tax", "rounding"]):
        b.tool_call(
            "Write",
            {
                "file_path": f"{BILLING_CWD}/billing-py/tax/{name}.py",
                "content": py_module(rng, name, 52),
            },
            f"File created successfully at: {BILLING_CWD}/billing-py/tax/{name}.py",
            text=f"Porting {name}." if index == 0 else None,
        )
    bash(
        b,
        "cd billing-py && pytest tests/tax -q",
        "..........F.....\nFAILED tests/tax/test_parity.py::test_ee_2026_rate - 0.22 != 0.24\n"
        "1 failed, 15 passed in 2.31s",
    )
    read(
        b,
        f"{BILLING_CWD}/config/vat/2026.yaml",
        "rates:\n"
        + "\n".join(f"  {c}: 0.{20 + i}" for i, c in enumerate("DE FR EE NL IT".split())),
    )
    edit(
        b,
        f"{BILLING_CWD}/billing-py/tax/rates.py",
        "    'EE': Decimal('0.22'),",
        "    'EE': Decimal('0.24'),  # from 2026-07-01",
    )
    bash(b, "cd billing-py && pytest tests/tax -q", "................\n16 passed in 2.12s")
    b.reply(
        "Parity tests pass: rate lookup, reverse charge, OSS, invoice tax and rounding are "
        "ported. Estonia moves to 24% on 2026-07-01, which the PHP table already had."
    )
    b.prompt("Now port the exemption list and the digital-services rules too.")
    for name in ["exemptions", "digital_services", "country_rates"]:
        title = name.title().replace("_", "")
        read(b, f"{BILLING_CWD}/lib/Tax/{title}.php", php_class(rng, title, 64), hooks=0)
    b.reply("Exemptions, digital services and country rates are read; porting them next.")
    b.prompt("Before that, check the credit-note rules, they reuse the same tables.")
    for name in ["CreditNotes", "CreditNoteRounding", "CreditNoteExports"]:
        read(b, f"{BILLING_CWD}/lib/Tax/{name}.php", php_class(rng, name, 56), hooks=0)
    worklog = "\n".join(
        f"- {8 + i // 24:02d}:{(i * 5) % 60:02d} ported "
        f"{rng.choice(php_files)}::rateFor{rng.choice(['DE', 'FR', 'EE'])}{i}; parity test "
        f"tests/tax/test_parity.py::test_case_{i} passes with {rng.randint(12, 480)} fixtures"
        for i in range(260)
    )
    files = "\n".join(
        f"- billing-py/tax/{n}.py: port of lib/Tax/{p}.php; entry points vat_*; keep "
        f"bcmath-equivalent rounding (ROUND_HALF_UP, 2 places); parity fixtures in "
        f"tests/tax/fixtures/{n}_{i}.json"
        for i, (n, p) in enumerate(
            (rng.choice(["rates", "oss", "rounding"]), rng.choice(php_files)) for _ in range(90)
        )
    )
    summary = notes(
        {
            "# Session Title": "Port lib/Tax to billing-py behind tax_v2",
            "# Current State": "Core engine ported with parity; porting exemptions, digital "
            "services and country rates next. Finance compares a full month from Friday.",
            "# Task specification": "Identical results to the PHP engine, behind the tax_v2 flag.",
            "# Files and Functions": files,
            "# Workflow": "cd billing-py && pytest tests/tax -q (parity against PHP fixtures)",
            "# Errors & Corrections": "EE rate was 0.22 in the port; 0.24 from 2026-07-01.",
            "# Worklog": worklog,
        }
    )
    return b, summary


def warnings_sm_compacted() -> tuple[SessionBuilder, str]:
    rng = random.Random(202)
    b = SessionBuilder(
        session_id="5f7d3e21-8c64-4a19-b2d5-61e0a9c37f84",
        cwd=BILLING_CWD,
        model="claude-sonnet-4-6",
        git_branch="fix/invoice-gaps",
        slug="quiet-cobalt-spruce",
        start=datetime(2026, 11, 27, 13, 5, tzinfo=UTC),
        seed=22,
        system_prompt_tokens=31_000,
    )
    b.prompt("Invoice numbers have gaps since last week's release. Find out why.")
    read(b, f"{BILLING_CWD}/lib/Invoice/Numbering.php", php_class(rng, "Numbering", 10))
    grep(
        b,
        "nextInvoiceNumber",
        [
            f"{BILLING_CWD}/lib/Invoice/Issue.php:{40 + i}: $n = nextInvoiceNumber()"
            for i in range(3)
        ],
    )
    read(b, f"{BILLING_CWD}/lib/Invoice/Issue.php", php_class(rng, "Issue", 12))
    b.reply(
        "The number is allocated before the PDF is rendered; when rendering fails the "
        "transaction rolls back but the sequence does not, leaving a gap."
    )
    b.prompt("Move the allocation to the end, in its own transaction.")
    head = b.entries[-1]["uuid"]
    edit(
        b,
        f"{BILLING_CWD}/lib/Invoice/Issue.php",
        "        $number = $this->numbers->next();\n        $pdf = $this->renderer->render($draft);",
        "        $pdf = $this->renderer->render($draft);\n        $number = $this->db->transaction(fn () "
        "=> $this->numbers->next());",
    )
    bash(b, "vendor/bin/phpunit tests/Invoice", "OK (38 tests, 112 assertions)")
    kept = b.reply("Allocation now happens last, in its own transaction; 38 tests pass.")
    tail = kept[-1]["uuid"]
    summary = notes(
        {
            "# Session Title": "Gapless invoice numbers after PDF failures",
            "# Current State": "Fix applied in lib/Invoice/Issue.php; tests pass. Next: backfill "
            "report of the gaps since the release for finance.",
            "# Errors & Corrections": "Gaps came from allocating before rendering; a failed render "
            "rolled back the invoice but not the sequence.",
            "# Worklog": "- found allocation order\n- moved allocation last\n- phpunit green",
        }
    )
    # The user ran /compact; session-memory compaction kept the recent messages verbatim
    # (and, as Claude Code does, recorded the boundary with trigger "auto").
    pre = b.prompt_tokens + b.last_output
    boundary, summary_message = b.compact(
        "This conversation continues from an earlier one. The session notes below cover the "
        "earlier part.\n\n" + summary,
        trigger="auto",
        pre_tokens=pre,
    )
    boundary["compactMetadata"]["preservedSegment"] = {
        "headUuid": head,
        "anchorUuid": summary_message["uuid"],
        "tailUuid": tail,
    }
    # The kept messages are sent again after the summary, so the next call's prompt holds them.
    uuids = [e.get("uuid") for e in b.entries]
    kept_entries = b.entries[uuids.index(head) : uuids.index(tail) + 1]
    b.pending_tokens += sum(
        rough_tokens_for_message(e) for e in kept_entries if e.get("type") in ("user", "assistant")
    )
    b.parent = tail  # the next message continues from the kept tail
    command_wrappers(b)
    b.prompt("Write the backfill report query for finance.")
    b.tool_call(
        "Write",
        {
            "file_path": f"{BILLING_CWD}/reports/invoice_gaps.sql",
            "content": "SELECT n FROM generate_series(1, 99999) n\nEXCEPT SELECT number FROM "
            "invoices WHERE issued_at >= '2026-11-20';",
        },
        f"File created successfully at: {BILLING_CWD}/reports/invoice_gaps.sql",
    )
    b.reply("reports/invoice_gaps.sql lists every missing number since the release.")
    return b, summary


def warnings_old_manual() -> SessionBuilder:
    rng = random.Random(203)
    b = SessionBuilder(
        session_id="a26c8b94-0e3f-4d71-95b8-c4e2f17d6a30",
        cwd=BILLING_CWD,
        model="claude-opus-4-6",
        git_branch="main",
        slug="old-granite-meadow",
        start=datetime(2026, 10, 2, 16, 20, tzinfo=UTC),
        seed=23,
        system_prompt_tokens=29_000,
    )
    b.prompt("The legacy cron for dunning emails runs twice some nights. Investigate.")
    read(b, f"{BILLING_CWD}/cron/dunning.php", php_class(rng, "Dunning", 8))
    bash(
        b,
        "crontab -l | grep dunning",
        "15 2 * * * php cron/dunning.php\n15 2 * * * php cron/dunning.php",
    )
    b.synthetic("[Request interrupted by user for tool use]")
    b.prompt("Sorry, continue. The crontab is managed by Ansible.")
    b.synthetic("API Error: 529 Overloaded. Please try again.")
    b.prompt("retry")
    read(b, f"{BILLING_CWD}/deploy/roles/cron/tasks/main.yml", "- name: dunning\n  cron: ...\n" * 6)
    b.reply("The Ansible role adds the job without a `name:` match, so each deploy appends a copy.")
    b.compact(
        "Summary:\n1. Primary Request and Intent: find why the dunning cron runs twice.\n"
        "2. Key Technical Concepts: Ansible cron module idempotency.\n"
        "8. Current Work: the role lacks a stable `name:`.",
        trigger="manual",
    )
    command_wrappers(b)
    b.prompt("Fix the role.")
    edit(
        b,
        f"{BILLING_CWD}/deploy/roles/cron/tasks/main.yml",
        "- cron:\n    job: php cron/dunning.php",
        "- cron:\n    name: dunning\n    job: php cron/dunning.php",
    )
    b.reply("The job now has a stable name, so Ansible replaces it instead of adding a copy.")
    return b


def write_all(root: Path) -> list[Path]:
    """Write both samples' transcripts under `root` (normally `sample_projects/`)."""
    healthy = root / "healthy" / "transcripts"
    warnings = root / "warnings" / "transcripts"
    for folder in (healthy, warnings):
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    session, summary = healthy_main()
    write_session(healthy, session, summary)
    write_session(healthy, healthy_small())
    session, summary = warnings_near_limit()
    write_session(warnings, session, summary)
    session, summary = warnings_sm_compacted()
    write_session(warnings, session, summary)
    write_session(warnings, warnings_old_manual())
    return [healthy, warnings]


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent
    folders = write_all(root)
    total = sum(p.stat().st_size for f in folders for p in f.rglob("*") if p.is_file())
    print(f"wrote {', '.join(map(str, folders))} ({total / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
