"""Shared topic fixtures: two long support tickets (ES/EN) and a context builder."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from memory.topic.decide import (
    TopicContext,
)
from memory.types import Exchange

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
