"""Reading Claude Code's environment switches the way it does (`isEnvTruthy` and friends)."""

from __future__ import annotations

from collections.abc import Mapping

_TRUTHY = frozenset({"1", "true", "yes", "on"})
_FALSY = frozenset({"0", "false", "no", "off"})


def is_truthy(value: str | None) -> bool:
    """True for `1/true/yes/on` in any case, surrounding spaces ignored."""
    return value is not None and value.strip().lower() in _TRUTHY


def is_defined_falsy(value: str | None) -> bool:
    """True for an explicit `0/false/no/off` (an unset variable is not falsy here)."""
    return value is not None and value.strip().lower() in _FALSY


def positive_int(env: Mapping[str, str], name: str) -> int | None:
    """The variable as a positive integer (`parseInt` style), or None when unset or invalid."""
    raw = env.get(name)
    if raw is None:
        return None
    digits = raw.strip()
    sign = ""
    if digits[:1] in "+-":
        sign, digits = digits[0], digits[1:]
    end = 0
    while end < len(digits) and digits[end].isdigit():
        end += 1
    if end == 0:
        return None
    value = int(sign + digits[:end])
    return value if value > 0 else None
