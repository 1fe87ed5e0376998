"""Cost of formatting a reply: Markdown rendered per channel, next to plain splitting.

    python -m bench.markup

Prints the median time per reply for a short (400 chars) and a long (12,000 chars,
three Telegram messages) Markdown reply: the plain split that was the whole cost before
(baseline), Telegram's render + entity split, and WhatsApp's markup, all in this run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from bot.channels.split import split_message
from bot.channels.telegram.markup import telegram_chunks
from bot.channels.whatsapp.markup import to_whatsapp

PARA = (
    "## Paso {n}\n\n**Revisa** el pedido `#4821` y _confirma_ la dirección; "
    "ver [la guía](https://example.com/guia) 😀.\n\n- harina 50 g\n- agua 50 g\n\n"
)


def _median_ms(fn: Callable[[str], object], text: str, rounds: int = 200) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    short = PARA.format(n=1) * 2
    long = "".join(PARA.format(n=n) for n in range(80))
    for label, text in (("short", short), ("long", long)):
        base = _median_ms(split_message, text)
        tg = _median_ms(telegram_chunks, text)
        wa = _median_ms(to_whatsapp, text)
        print(
            f"{label:5} reply ({len(text):>6,} chars): plain split {base:.3f} ms (baseline) · "
            f"telegram render+split {tg:.3f} ms · whatsapp markup {wa:.3f} ms"
        )


if __name__ == "__main__":
    main()
