"""Invoices: issue, number and total them."""


def total_cents(lines: list[int]) -> int:
    return sum(lines)
