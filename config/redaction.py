"""`redact`: text from outside (a provider's error message, an exception) made fit for a
log line. Pure; used wherever such text is logged, and by the logging configuration as a
last line of defence on the fields that carry it.

Providers echo part of the key ("Incorrect API key provided: sk-ab…cd"), other vendors'
keys have other shapes (`AIza…`, `fw_…`, hex or base64 runs), and a 400 may quote the
prompt back: keys of every shape become `[redacted]`, control characters spaces, and the
result is cut to `MAX_CHARS` (after redaction, so half a key is never left at the cut).
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"
MAX_CHARS = 120

_PATTERNS = (
    # "Authorization: Bearer …" / "Basic …": whatever follows is the credential.
    r"(?i:\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=\-]{6,}",
    # Vendor prefixes: sk-/sk_ (OpenAI, Anthropic, Stripe), pk, rk, xai-, gsk_ (Groq),
    # fw_ (Fireworks), hf_, GitHub's gh?_, GitLab's glpat-, Slack's xox?-, key-/key_.
    r"\b(?:sk|pk|rk|key|xai|gsk|fw|hf|gh[pousr]|glpat|xox[abprs])[-_][A-Za-z0-9_\-*.]{6,}",
    r"\beyJ[A-Za-z0-9_\-]{6,}(?:\.[A-Za-z0-9_\-]+){1,2}",  # JWT
    r"\bAIza[0-9A-Za-z_\-]{20,}",  # Google
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
    r"\b[0-9a-fA-F]{24,}\b",  # long hex runs
)
_SECRET = re.compile("|".join(f"(?:{p})" for p in _PATTERNS))
# A long base64 run (a token, a bot token's tail) is redacted when it mixes digits, upper
# and lower case as random strings do; paths and snake_case names in a traceback do not.
_RUN = re.compile(r"[A-Za-z0-9+/_\-]{32,}={0,2}")
_MIXED = (re.compile(r"\d"), re.compile(r"[A-Z]"), re.compile(r"[a-z]"))
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def redact_secrets(text: str) -> str:
    """`text` with every key-shaped run replaced by `[redacted]`; nothing else changes."""
    return _RUN.sub(_random_run, _SECRET.sub(REDACTED, text))


def _random_run(match: re.Match[str]) -> str:
    run = match.group()
    return REDACTED if all(kind.search(run) for kind in _MIXED) else run


def redact(text: str, max_chars: int = MAX_CHARS) -> str:
    """`text` for a log line: keys redacted, one line, at most `max_chars` characters."""
    line = _CONTROL.sub(" ", redact_secrets(text))
    if len(line) <= max_chars:
        return line
    return line[: max_chars - 1].rstrip() + "…"
