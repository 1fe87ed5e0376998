"""Topic detection: seed 002's signals, idle, modes, the LLM verdict and the TIAGE bench."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.topic_tiage import pair, score
from memory.topic.decide import (
    TopicContext,
    decide,
    detect_heuristic,
    detect_llm,
    parse_llm_verdict,
)
from memory.types import Exchange, TopicDecision
from providers.base import ChatReply, ChatRequest, Overloaded, ProviderError

NOW = datetime(2025, 7, 21, 10, 0, tzinfo=UTC)

TICKET_ES = [
    (
        "Hola, migré el dominio hostnimbus-demo.com hace 2 días y el subdominio app. no carga",
        "Hola. ¿Qué error ves exactamente al abrir app.hostnimbus-demo.com?",
    ),
    (
        "Dice DNS_PROBE_FINISHED_NXDOMAIN en Chrome",
        "Eso indica que el nombre no resuelve. ¿Cambiaste los NS a ns1/ns2.hostnimbus.com?",
    ),
    (
        "Sí, los cambié el 19 de julio por la mañana",
        "Bien. La propagación puede tardar hasta 48 horas. ¿El dominio principal sí carga?",
    ),
    ("El principal carga bien, solo falla app.", "Entonces revisemos la zona DNS del panel."),
    (
        "¿Dónde veo la zona? No encuentro el menú",
        "En Panel > Dominios > hostnimbus-demo.com > Zona DNS.",
    ),
    (
        "Ok ya entré. Veo registros A, MX y un CNAME para www",
        "¿Aparece algún registro para app? Puede ser A o CNAME.",
    ),
    ("No, para app no hay nada", "Ahí está la causa: falta el registro A del subdominio."),
    ("¿Y qué IP le pongo?", "La del servidor: 203.0.113.24, la misma del registro A principal."),
    (
        "Listo, agregué A app 203.0.113.24 con TTL 3600",
        "Perfecto. Espera unos minutos y prueba de nuevo.",
    ),
    ("Sigue saliendo NXDOMAIN", "Puede ser caché. ¿Probaste en modo incógnito?"),
    ("En incógnito igual", "Prueba con nslookup app.hostnimbus-demo.com 8.8.8.8"),
    (
        "Me devuelve: *** dns.google can't find app.hostnimbus-demo.com: Non-existent domain",
        "Google todavía no ve el registro. ¿Guardaste los cambios de la zona?",
    ),
    ("Creo que sí, le di a guardar", "Revisa si el registro figura como activo en la lista."),
    (
        "Figura como pendiente de publicación",
        "Entonces la zona no se publicó. Pulsa 'Publicar zona'.",
    ),
    ("No veo ese botón, solo 'Guardar' y 'Descartar'", "¿Qué rol tiene tu usuario en el panel?"),
    (
        "Soy técnico, no administrador",
        "El rol técnico no publica zonas. Pide al admin que publique.",
    ),
    ("Ya le avisé a mi jefe, lo publica en un rato", "Perfecto, quedo atento a tu resultado."),
    (
        "Publicado. Ahora nslookup devuelve 203.0.113.24",
        "Excelente, el registro ya propaga. ¿Carga la web?",
    ),
    (
        "Ahora carga pero con error de certificado NET::ERR_CERT_COMMON_NAME_INVALID",
        "El certificado SSL no cubre app. ¿Usas Let's Encrypt desde el panel?",
    ),
    ("Sí, el que viene gratis", "Hay que reemitirlo incluyendo el subdominio app."),
    ("¿Cómo lo reemito?", "Panel > SSL > hostnimbus-demo.com > Reemitir, marcando app."),
    ("Me sale 'Validación HTTP-01 fallida'", "¿El subdominio apunta a la carpeta correcta?"),
    ("Apunta a /public_html/app", "¿Existe esa carpeta en el servidor?"),
    (
        "Sí, ahí está el index.php de la aplicación",
        "Revisa si un .htaccess bloquea /.well-known/.",
    ),
    (
        "Hay un .htaccess que redirige todo a index.php",
        "Agrega una excepción para .well-known/acme-challenge antes de la regla.",
    ),
    ("Agregué RewriteRule ^\\.well-known - [L] arriba de todo", "Bien, reintenta la emisión."),
    (
        "Otra vez falla, ahora con 'Timeout during connect'",
        "Puede ser el firewall. ¿Tienes el puerto 80 abierto?",
    ),
    ("En el firewall del VPS solo está el 443", "Let's Encrypt necesita el 80 para HTTP-01."),
    ("Abrí el 80 con ufw allow 80/tcp", "Perfecto, prueba de nuevo la reemisión."),
    ("¡Se emitió! Válido hasta el 18 de octubre", "Genial. Comprueba la web en el navegador."),
    (
        "Carga con candado, pero las imágenes no aparecen",
        "Puede ser contenido mixto. ¿La consola muestra 'Mixed Content'?",
    ),
    (
        "Sí, muchas advertencias de Mixed Content con http://",
        "Cambia la URL base de la aplicación a https.",
    ),
    ("En el config.php tenía base_url con http, ya lo cambié", "¿Siguen las advertencias?"),
    ("Quedan dos, de un script de analytics externo", "Esas debes cambiarlas en la plantilla."),
    ("Corregido en la plantilla, ya no hay advertencias", "Perfecto. ¿Algo más del subdominio?"),
    (
        "La app va lenta, tarda 8 segundos en cargar el login",
        "¿Pasaba antes de la migración o es nuevo?",
    ),
    (
        "Antes tardaba 2 segundos, es desde la migración",
        "Puede ser la versión de PHP. ¿Qué versión tienes en app.?",
    ),
    ("Dice PHP 7.4, en el servidor viejo usaba 8.2", "Cambia a 8.2 en Panel > PHP > app."),
    (
        "Cambiado a 8.2 y ahora el login carga en 1,5 segundos",
        "Excelente mejora. Revisa también el log de errores.",
    ),
    (
        "En el error_log hay un warning de session.save_path",
        "Configura session.save_path a /tmp en el php.ini de app.",
    ),
]

TICKET_EN = [
    (
        "Our nightly backup job to the S3 bucket failed with exit code 23",
        "Exit code 23 in rsync means a partial transfer. Do you have the job log?",
    ),
    (
        "Log says: rsync: send_files failed to open 'db/dump.sql': Permission denied (13)",
        "The backup user cannot read that file. Who owns db/dump.sql?",
    ),
    ("It's owned by postgres with mode 600", "Then the backup user needs group read access."),
    (
        "Added backup to the postgres group, chmod 640 on the dump",
        "Good. Can you run the job by hand?",
    ),
    ("Ran it manually, same error", "Group changes need a new login. Did you restart the agent?"),
    (
        "Restarted the backup-agent service, now it gets past the dump",
        "Progress. What happens next in the log?",
    ),
    (
        "Now it stops at upload: An error occurred (AccessDenied) when calling PutObject",
        "The IAM policy is probably missing s3:PutObject on the bucket.",
    ),
    (
        "Here is the policy, it only has s3:ListBucket and s3:GetObject",
        "Add s3:PutObject on arn:aws:s3:::acme-backups/*.",
    ),
    ("Updated the policy. Still AccessDenied", "Is the bucket encrypted with a KMS key?"),
    ("Yes, SSE-KMS with key alias/backups", "Then the role also needs kms:GenerateDataKey."),
    ("Added kms:GenerateDataKey and kms:Encrypt", "Try the upload again."),
    (
        "Upload works now for small files but the 40 GB dump fails halfway",
        "Large uploads use multipart. Any error code?",
    ),
    ("EntityTooLarge on part 10001", "Multipart allows 10,000 parts; raise the part size."),
    (
        "Where do I set that? We use the aws cli",
        "Set multipart_chunksize = 64MB in ~/.aws/config for that profile.",
    ),
    ("Set it to 64MB, retrying now", "Let me know how it goes."),
    (
        "The upload finished but took 3 hours, it used to take 40 minutes",
        "Check max_concurrent_requests; the default is 10.",
    ),
    ("Raised it to 20, now 55 minutes", "Better. Is the link saturated?"),
    ("Network graph shows 300 Mbps on a 1 Gbps link", "Compression may be the bottleneck."),
    ("We gzip the dump before upload, single threaded", "Try pigz for parallel compression."),
    ("pigz cut compression from 35 to 9 minutes", "Great. Total runtime now?"),
    ("About 30 minutes end to end", "That fits your window. Is the cron job updated?"),
    (
        "Cron runs at 02:00 UTC, I updated the script path",
        "Good. We'll confirm after tonight's run.",
    ),
    (
        "Last night's run failed again, exit code 1 this time",
        "What does the log show right before the exit?",
    ),
    (
        "pg_dump: error: connection to server on socket failed: FATAL: role backup does not exist",
        "The cron job runs pg_dump as backup, not postgres.",
    ),
    ("Manually it ran as postgres via sudo, right", "Add sudo -u postgres in the cron script."),
    (
        "Added it, but cron says sudo: a terminal is required",
        "Use a sudoers rule with NOPASSWD for that one command.",
    ),
    ("Added backup ALL=(postgres) NOPASSWD: /usr/bin/pg_dump", "Test it with sudo -n."),
    ("sudo -n works without a password prompt", "Let's wait for tonight's run."),
    ("Tonight's run succeeded, 41.2 GB in 31 minutes", "Excellent. Check restore too."),
    (
        "How do I test the restore without touching production?",
        "Restore into a scratch instance with pg_restore into a new database.",
    ),
    ("Spun up a t3.large and restored, it took 50 minutes", "Did the row counts match?"),
    (
        "Row counts match except the audit_log table is empty",
        "Is audit_log excluded in the dump options?",
    ),
    (
        "Yes, --exclude-table-data=audit_log is in the script",
        "Remove it if you need audit history in backups.",
    ),
    ("Removed it, dump grew to 48 GB", "Expected. Does the upload still fit the window?"),
    ("It took 38 minutes, still fine", "Good. Consider a lifecycle rule for old backups."),
    (
        "How many days should we keep?",
        "That is your policy; 30 days daily plus 12 monthly is common.",
    ),
    (
        "Set lifecycle: transition to Glacier after 30 days, expire after 365",
        "Good. Also enable versioning to protect against deletes.",
    ),
    (
        "Versioning enabled, but now I see a warning about MFA delete",
        "MFA delete is optional; it can only be enabled by the root account.",
    ),
    (
        "We'll skip MFA delete for now. The alert email did not arrive after last night's run",
        "Check the SNS topic subscription; it may be pending confirmation.",
    ),
    (
        "The subscription was pending, I confirmed it. Will the next failure alert us?",
        "Yes, once confirmed the alarm will notify that address.",
    ),
]


def context(
    message: str,
    window: list[tuple[str, str]] | tuple[Exchange, ...] = (),
    *,
    summary: str = "",
    idle: timedelta | None = timedelta(minutes=3),
    idle_reset_hours: float = 0,
    rounds: int = 0,
    language: str = "es",
) -> TopicContext:
    exchanges = tuple(
        e if isinstance(e, Exchange) else Exchange(i, 1, e[0], e[1]) for i, e in enumerate(window)
    )
    return TopicContext(
        message=message,
        window=exchanges,
        summary=summary,
        now=NOW,
        last_activity=None if idle is None else NOW - idle,
        idle_reset_hours=idle_reset_hours,
        summary_rounds=rounds,
        language=language,
    )


def ticket_contexts(
    turns: list[tuple[str, str]], summary: str, language: str
) -> Iterator[tuple[int, TopicContext]]:
    """Yield the context of every turn as the product would build it (window 6, folds of 4)."""
    for i, (message, _) in enumerate(turns):
        older = max(0, i - 6)
        yield (
            i,
            context(
                message,
                turns[older:i],
                summary=summary if older else "",
                rounds=older // 4,
                language=language,
            ),
        )


SUMMARY_ES = (
    "Ticket de soporte: el cliente migró hostnimbus-demo.com hace 2 días (NS cambiados el 19 de "
    "julio). El subdominio app. devolvía NXDOMAIN; faltaba el registro A app -> 203.0.113.24, "
    "que se agregó y publicó. Luego hubo que reemitir el certificado SSL de Let's Encrypt."
)
SUMMARY_EN = (
    "Support ticket: the nightly rsync/S3 backup of the Postgres dump failed. Fixed file "
    "permissions, the IAM policy (s3:PutObject, KMS), multipart chunk size and compression; "
    "the cron job now runs pg_dump through sudo. Pending: restore test and retention."
)


@pytest.mark.parametrize(
    ("turns", "summary", "language"),
    [(TICKET_ES, SUMMARY_ES, "es"), (TICKET_EN, SUMMARY_EN, "en")],
    ids=["es", "en"],
)
def test_technical_ticket_of_40_turns_never_resets(
    turns: list[tuple[str, str]], summary: str, language: str
) -> None:
    """A technical ticket growing for 40 turns stays 'continue' at every turn."""
    assert len(turns) == 40
    resets = [
        (i, ctx.message, d.reason)
        for i, ctx in ticket_contexts(turns, summary, language)
        if (d := detect_heuristic(ctx)).reset
    ]
    assert resets == []


def test_closed_ticket_then_billing_days_later_resets_es() -> None:
    """A ticket closed with 'ya funciona, gracias' and a billing question later → reset."""
    window = [
        *TICKET_ES[-4:-1],
        ("Ya funciona, gracias, eso es todo", "¡Me alegro! Cierro el ticket #4821."),
    ]
    ctx = context(
        "Hola, tengo un cobro duplicado en la factura de julio: me cargaron 49,90 € dos veces",
        window,
        summary=SUMMARY_ES,
        idle=timedelta(days=3),
    )
    decision = detect_heuristic(ctx)
    assert decision.reset
    assert decision.reason == "case_closed"
    assert decision.signals["closure_cues_last_exchange"]


def test_closed_ticket_then_billing_days_later_resets_en() -> None:
    """'That fixed it, thanks, bye' then an invoice question days later → reset."""
    window = [*TICKET_EN[-3:], ("That fixed it, thanks, bye!", "Glad to help, closing the case.")]
    ctx = context(
        "Hi, I was charged twice for the June invoice, can you refund one payment?",
        window,
        summary=SUMMARY_EN,
        idle=timedelta(days=4),
        language="en",
    )
    decision = detect_heuristic(ctx)
    assert (decision.action, decision.reason) == ("reset", "case_closed")


def test_thanks_after_closure_is_not_a_new_subject() -> None:
    """A farewell right after the case closed continues: no new subject began."""
    window = [("Ya funciona, gracias", "¡Genial! ¿Algo más?")]
    decision = detect_heuristic(context("No, nada más. ¡Muchas gracias!", window))
    assert decision.action == "continue"


def test_intent_switch_tech_to_billing_resets() -> None:
    """Mid-ticket, a billing question (no closure) resets with 'intent_changed'."""
    ctx = context(
        "Otra consulta aparte: ¿por qué me cobraron dos veces la factura de marzo?",
        TICKET_ES[20:26],
        summary=SUMMARY_ES,
    )
    decision = detect_heuristic(ctx)
    assert decision.reset
    assert decision.reason in {"intent_changed", "new_subject"}
    assert decision.signals["message_intent"] == "billing"
    assert decision.signals["episode_intent"] == "technical"


def test_intent_switch_purchase_to_complaint_resets() -> None:
    """After comparing financing for a car, a warranty complaint resets."""
    window = [
        (
            "What financing plans do you offer for the Corolla Hybrid?",
            "We have 36 and 60 month plans; the 60 month one has a 4.9% rate.",
        ),
        (
            "What would the monthly price be with a 5,000 down payment on 60 months?",
            "About 410 per month, insurance not included.",
        ),
        (
            "Is there a discount if I buy this month?",
            "Yes, a 1,000 discount on stock units until the 31st.",
        ),
        ("Can I reserve the grey one in stock?", "Sure, a 200 deposit reserves it for 7 days."),
    ]
    ctx = context(
        "The gearbox is broken and grinding, I want to file a warranty complaint",
        window,
        language="en",
    )
    decision = detect_heuristic(ctx)
    assert (decision.action, decision.reason) == ("reset", "intent_changed")


def test_same_intent_follow_up_with_new_words_continues() -> None:
    """A follow-up in the ticket's own intent family is the same case even with new words."""
    ctx = context(
        "¿Puede ser que el router de la oficina bloquee el puerto 80?",
        TICKET_ES[24:30],
        summary=SUMMARY_ES,
    )
    assert detect_heuristic(ctx).action == "continue"


def test_new_request_cue_with_a_new_subject_resets() -> None:
    """'By the way' plus a subject the episode never mentioned resets."""
    ctx = context(
        "By the way, do you ship printed manuals to Canada?",
        TICKET_EN[30:34],
        language="en",
    )
    assert detect_heuristic(ctx).reset


def test_new_request_cue_about_the_same_case_continues() -> None:
    """'Otra cosa' about the same error is not a new subject."""
    ctx = context("Otra cosa: el error NXDOMAIN sigue en el móvil", TICKET_ES[8:12])
    assert detect_heuristic(ctx).action == "continue"


def test_idle_silence_resets() -> None:
    """More silence than idle_reset_hours resets with 'idle', whatever the message."""
    ctx = context("Sigue fallando", TICKET_ES[:3], idle=timedelta(hours=30), idle_reset_hours=24)
    decision = detect_heuristic(ctx)
    assert (decision.action, decision.reason) == ("reset", "idle")
    assert decision.signals["idle_hours"] == 30.0


@pytest.mark.parametrize(
    ("idle", "hours"), [(timedelta(hours=2), 24), (timedelta(days=90), 0), (None, 24)]
)
def test_no_idle_reset_below_limit_or_when_disabled(idle: timedelta | None, hours: float) -> None:
    """Short silence, idle_reset_hours 0 or no earlier message never trigger the idle reset."""
    ctx = context("Sigue fallando", TICKET_ES[:3], idle=idle, idle_reset_hours=hours)
    assert detect_heuristic(ctx).reason != "idle"


def test_empty_episode_never_resets() -> None:
    """Nothing in the window and no summary: nothing to reset, even after long silence."""
    ctx = context("Quiero pagar mi factura", idle=timedelta(days=9), idle_reset_hours=1)
    assert detect_heuristic(ctx).action == "continue"


@given(rounds=st.integers(min_value=0, max_value=50))
def test_summary_rounds_alone_never_reset(rounds: int) -> None:
    """Many summary rounds are reported, but a same-case message still continues."""
    for i in (10, 20, 35):
        ctx = context(TICKET_ES[i][0], TICKET_ES[i - 6 : i], summary=SUMMARY_ES, rounds=rounds)
        decision = detect_heuristic(ctx)
        assert decision.action == "continue"
        assert decision.signals["summary_rounds_high"] is (rounds >= 2)


def test_summary_rounds_lower_the_bar_with_another_signal() -> None:
    """With many rounds, a new-request cue plus novelty is enough to reset."""
    message = "By the way, can you recommend a laptop for video editing?"
    ctx = context(message, TICKET_EN[30:34], summary=SUMMARY_EN, language="en")
    low, high = detect_heuristic(ctx), detect_heuristic(replace(ctx, summary_rounds=3))
    assert high.reset
    assert high.signals["threshold"] < low.signals["threshold"]


def test_signals_are_json_serialisable() -> None:
    """Every decision's signals survive json.dumps (they are stored with the turn)."""
    for _, ctx in ticket_contexts(TICKET_EN, SUMMARY_EN, "en"):
        json.dumps(detect_heuristic(ctx).signals)


# --- modes and the LLM verdict ------------------------------------------------------------


class ScriptedChatModel:
    """Returns a fixed text (or raises) and records every request."""

    def __init__(self, text: str = "", error: ProviderError | None = None) -> None:
        self.name = "scripted"
        self.text = text
        self.error = error
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        return ChatReply(text=self.text, model=self.name)


def _verdict(same: bool, closed: bool = False, confidence: float = 0.9) -> str:
    return json.dumps(
        {"same_case": same, "case_closed": closed, "confidence": confidence, "reason": "x"}
    )


CLOSED_THEN_BILLING = context(
    "Tengo un cobro duplicado en la factura de julio",
    [("Ya funciona, gracias, eso es todo", "¡Me alegro! Cierro el ticket.")],
    idle=timedelta(days=3),
    idle_reset_hours=48,
)


async def test_off_mode_never_resets() -> None:
    """'off' continues even for a closed case, a billing switch and idle silence."""
    decision = await decide("off", CLOSED_THEN_BILLING, ScriptedChatModel(_verdict(False)))
    assert decision.action == "continue"


@pytest.mark.parametrize(
    ("text", "action", "reason"),
    [
        (_verdict(False), "reset", "llm_new_subject"),
        (_verdict(False, closed=True), "reset", "case_closed"),
        (_verdict(True), "continue", "llm_same_case"),
        (_verdict(False, confidence=0.6), "continue", "llm_low_confidence"),
        ("```json\n" + _verdict(False) + "\n```", "reset", "llm_new_subject"),
        ("same case, I think", "continue", "llm_malformed"),
        ('{"same_case": "no", "confidence": 0.9}', "continue", "llm_malformed"),
        ('{"same_case": false, "confidence": 1.7}', "continue", "llm_malformed"),
        ('{"same_case": false, "confidence": 0.9', "continue", "llm_malformed"),
        ("", "continue", "llm_malformed"),
    ],
)
async def test_llm_mode_reads_the_verdict(text: str, action: str, reason: str) -> None:
    """A confident 'not the same case' resets; anything else, malformed included, continues."""
    model = ScriptedChatModel(text)
    ctx = replace(CLOSED_THEN_BILLING, idle_reset_hours=0)
    decision = await decide("llm", ctx, model)
    assert (decision.action, decision.reason) == (action, reason)
    assert decision.signals["mode"] == "llm"
    (request,) = model.requests
    assert request.purpose == "topic"
    assert request.max_tokens <= 200
    assert "Tengo un cobro duplicado" in request.messages[-1].content
    json.dumps(decision.signals)


async def test_llm_mode_provider_error_continues() -> None:
    """A ProviderError from the model continues and names the error kind."""
    model = ScriptedChatModel(error=Overloaded("busy"))
    ctx = replace(CLOSED_THEN_BILLING, idle_reset_hours=0)
    decision = await detect_llm(model, ctx)
    assert (decision.action, decision.reason) == ("continue", "llm_error")
    assert decision.signals["llm_error"] == "overloaded"


async def test_llm_mode_idle_is_decided_before_any_call() -> None:
    """Idle silence resets in llm mode without calling the model."""
    model = ScriptedChatModel(_verdict(True))
    decision = await decide("llm", CLOSED_THEN_BILLING, model)
    assert (decision.action, decision.reason) == ("reset", "idle")
    assert model.requests == []


async def test_llm_mode_without_model_falls_back_to_heuristic() -> None:
    """Asked for llm with no model, decide uses the heuristic and says so."""
    ctx = replace(CLOSED_THEN_BILLING, idle_reset_hours=0)
    decision = await decide("llm", ctx, None)
    assert decision.signals["mode"] == "heuristic"
    assert decision.signals["llm_unavailable"] is True
    assert decision == TopicDecision(decision.action, decision.reason, decision.signals)
    assert decision.reset


def test_parse_llm_verdict_is_total() -> None:
    """Any text parses to a decision; garbage continues."""
    for text in ("null", "[1, 2]", "{}", '{"same_case": true}', "{{{{"):
        decision = parse_llm_verdict(text)
        assert decision.action == "continue"


# --- the TIAGE bench ----------------------------------------------------------------------


def test_bench_scores_precision_recall_f1() -> None:
    """score() on a tiny handmade sample: tp=2, fp=1, fn=2 → P=2/3, R=1/2, F1=4/7."""
    gold = [True, True, True, True, False, False]
    predicted = [True, True, False, False, True, False]
    result = score(gold, predicted)
    assert (result.tp, result.fp, result.fn) == (2, 1, 2)
    assert result.precision == pytest.approx(2 / 3)
    assert result.recall == pytest.approx(1 / 2)
    assert result.f1 == pytest.approx(4 / 7)


def test_bench_scores_degenerate_cases() -> None:
    """No predicted shifts gives zeros instead of dividing by zero; always-shift has R=1."""
    assert score([True, False], [False, False]).f1 == 0.0
    always = score([True, False, False, False], [True] * 4)
    assert (always.precision, always.recall) == (0.25, 1.0)
    assert always.f1 == pytest.approx(0.4)


def test_bench_pairs_utterances_from_the_end() -> None:
    """The utterance before the message is the last reply; an odd first one has no user side."""
    exchanges = pair(["a", "b", "c", "d", "e"], window=6)
    assert [(e.user_text, e.reply_text) for e in exchanges] == [("", "a"), ("b", "c"), ("d", "e")]
    assert [(e.user_text, e.reply_text) for e in pair(["a", "b", "c"], window=1)] == [("b", "c")]


def test_respect_undo_suppresses_resets_for_a_while() -> None:
    """Right after /undo a reset decision becomes 'continue'; later it stands again."""
    from datetime import UTC, datetime

    from memory.topic.decide import respect_undo
    from memory.types import TopicDecision

    now = datetime(2026, 7, 1, tzinfo=UTC)
    reset = TopicDecision("reset", "intent_changed", {"x": 1})
    kept = respect_undo(reset, now - timedelta(minutes=5), now, within_s=3600)
    assert (kept.action, kept.reason) == ("continue", "after_undo")
    assert kept.signals["suppressed_reset"] == "intent_changed"
    assert respect_undo(reset, now - timedelta(hours=2), now, within_s=3600) == reset
    assert respect_undo(reset, None, now, within_s=3600) == reset


FOLLOW_UPS = [
    (
        "Hello, my order #A-5521 arrived damaged on July 14.",
        "Sorry to hear that. I see order #A-5521; can you describe the damage?",
    ),
    (
        "The box was crushed and the lamp base is cracked.",
        "Thanks. I can offer a replacement or a refund of $84.90. Which do you prefer?",
    ),
    (
        "A replacement, please. Ship it to the same address.",
        "Done: replacement for #A-5521 ships within 3 business days.",
    ),
    ("Will I need to return the broken one?", "No, you can keep or recycle it."),
    (
        "Great. Can you email me the confirmation at sam@example.org?",
        "Sent to sam@example.org. Anything else?",
    ),
    ("What's the tracking number?", "It will be TRK-99-1204 once the courier scans it."),
]


def test_support_profile_keeps_follow_up_questions_in_the_case() -> None:
    """Support follow-ups full of new words never reset under the support profile."""
    from memory.topic.decide import SUPPORT_TUNING

    now = datetime(2026, 7, 17, tzinfo=UTC)
    for i in range(1, len(FOLLOW_UPS)):
        window = tuple(
            Exchange(j, 1, u, r) for j, (u, r) in enumerate(FOLLOW_UPS[max(0, i - 2) : i])
        )
        ctx = TopicContext(FOLLOW_UPS[i][0], window, "", now, now, 0, 0, "en")
        assert not detect_heuristic(ctx, SUPPORT_TUNING).reset, FOLLOW_UPS[i][0]


def test_support_profile_resets_on_an_explicit_new_request() -> None:
    """A new-request cue with a new subject still resets under the support profile."""
    from memory.topic.decide import SUPPORT_TUNING

    now = datetime(2026, 7, 17, tzinfo=UTC)
    window = tuple(Exchange(j, 1, u, r) for j, (u, r) in enumerate(FOLLOW_UPS[-3:]))
    message = "By the way, a different question: can I change the password of my account?"
    ctx = TopicContext(message, window, "", now, now, 0, 0, "en")
    decision = detect_heuristic(ctx, SUPPORT_TUNING)
    assert decision.reset
    assert decision.signals["new_request_cues"]


@pytest.mark.parametrize(
    ("text", "announces_new_subject"),
    [
        ("¿Qué otra cosa puedo probar?", False),
        ("¿Hay alguna otra cosa que pueda hacer?", False),
        ("Is there anything else I can try?", False),
        ("Can I try something else?", False),
        ("Otra cosa: ¿cómo cambio mi contraseña?", True),
        ("Por cierto, ¿la base se puede devolver?", True),
        ("Something else: my invoice is wrong", True),
    ],
)
def test_asking_for_an_alternative_is_not_a_new_request(
    text: str, announces_new_subject: bool
) -> None:
    """'¿Qué otra cosa puedo probar?' asks for another step of the same case."""
    from memory.topic.cues import NEW_REQUEST
    from memory.topic.text import new_request_hits

    assert bool(new_request_hits(text, NEW_REQUEST)) is announces_new_subject


# The per-text caches must give exactly what reading the joined text gave: the references
# below are the original, uncached definitions.
_EPISODE_WORDS = (
    "base de datos se cae cuelga no llego mal estado servicio error code bank account "
    "double charge pago pagos logs log https http reclamo queja factura compra precio "
    "ya funciona works now thats all but pero gracias por todo bye otra cosa by the way "
    "İnvoice Cañón l'app it’s order-731. #4821 a.b _x_ café ¿ - /"
)
_EPISODE_PIECES = [*_EPISODE_WORDS.split(), " ", "  ", ", ", ". ", "? ", "\n"]
_texts = st.lists(
    st.lists(st.sampled_from(_EPISODE_PIECES), max_size=12).map(" ".join), max_size=6
)


def _reference_fold(text: str) -> str:
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return plain.replace("'", "").replace("’", "")


def _reference_family_hits(text: str, families: dict[str, tuple[str, ...]]) -> dict[str, int]:
    from memory.topic.text import words

    def single(entry: str, token: str) -> bool:
        if entry.endswith("*"):
            return token.startswith(entry[:-1])
        return token in (entry, entry + "s", entry + "es")

    tokens = words(text)
    counts: dict[str, int] = {}
    for token in tokens:
        for family, entries in families.items():
            hits = sum(single(e, token) for e in entries if " " not in e)
            if hits:
                counts[family] = counts.get(family, 0) + hits
    joined = " " + " ".join(tokens) + " "
    for family, entries in families.items():
        hits = sum(joined.count(" " + e + " ") for e in entries if " " in e)
        if hits:
            counts[family] = counts.get(family, 0) + hits
    return counts


def test_strip_marks_equals_the_per_character_definition() -> None:
    """Every code point, and marks next to letters: the regex passes drop exactly the
    characters `unicodedata.combining` flags (U+034F in the accent block is not one)."""
    import unicodedata

    from memory.accents import strip_marks

    every = "".join(map(chr, range(0x110000)))
    mixed = "e\u0301a\u034fn\u0303’€\u20d7x\u1ab0" * 3
    for text in (every, mixed, "plain ascii"):
        assert strip_marks(text) == "".join(c for c in text if not unicodedata.combining(c))


@given(st.text(alphabet="aAeÉñÑ'’İıẞ\u0301 .,¿?-#€$@_/1" + "\u034f\u20d7", max_size=40))
def test_fold_equals_the_per_character_definition(text: str) -> None:
    from memory.topic.text import fold

    assert fold.__wrapped__(text) == _reference_fold(text)


@given(st.text(alphabet="ab1#$€_-./@ ,x\n", max_size=40))
def test_words_end_on_a_letter_digit_or_symbol(text: str) -> None:
    """The possessive token regex equals the original: longest run, then `.-/_` stripped."""
    import re

    from memory.topic.text import words

    old = re.compile(r"[a-z0-9#$€][a-z0-9#_\-./@€$]*")
    expected = tuple(w.strip(".-/_") for w in old.findall(text) if w.strip(".-/_"))
    assert words.__wrapped__(text) == expected


@given(_texts)
def test_episode_readings_equal_reading_the_joined_text(texts: list[str]) -> None:
    """Family hits, cue phrases and terms from per-text caches equal those of the texts
    joined by newlines, phrases spanning two texts ("base" | "de datos") included."""
    from memory.topic.cues import CLOSURE, INTENT_FAMILIES, NEW_REQUEST
    from memory.topic.text import (
        family_hits_in,
        phrase_hits,
        phrase_hits_in,
        term_set,
        terms,
    )

    joined = "\n".join(texts)
    expected = _reference_family_hits(joined, dict(INTENT_FAMILIES))
    got = family_hits_in(texts, INTENT_FAMILIES)
    assert list(got.items()) == list(expected.items())  # same counts, same order
    for cues in (CLOSURE, NEW_REQUEST):
        assert phrase_hits_in(texts, cues) == phrase_hits(joined, cues)
    assert frozenset().union(*map(term_set, texts)) == frozenset(terms(joined))


def test_a_phrase_across_two_texts_counts_once_joined() -> None:
    """A summary ending in "base" and a message opening with "de datos" still make the
    phrase "base de datos", as they did when the episode was one joined text."""
    from memory.topic.cues import INTENT_FAMILIES
    from memory.topic.text import family_hits, family_hits_in

    texts = ["revisamos la base", "de datos y el servidor"]
    apart = [family_hits(text, INTENT_FAMILIES).get("technical", 0) for text in texts]
    assert apart == [0, 1]  # only "servidor"
    assert family_hits_in(texts, INTENT_FAMILIES) == {"technical": 2}  # and the phrase
