"""Every SQL statement of `PostgresStore`, by what it does. Columns are aliased with a
prefix wherever one row carries several types (`rows.py` reads them by name)."""

from __future__ import annotations

EXCHANGE_COLS = "id, episode_id, user_text, reply_text, signal, noise_reason, created_at"
EPISODE_COLS = (
    "id, session_id, started_at, closed_at, close_reason, opened_by, reopened_at, carry_over"
)
SUMMARY_COLS = (
    "id, episode_id, version, text, checkpoint, prompt_version, model, source_from,"
    " source_to, input_tokens, output_tokens, round, created_at"
)
INBOX_COLS = (
    "id, session_key, external_id, user_ref, kind, text, received_at, status, replies, reason"
)


def _prefixed(table: str, cols: str, prefix: str) -> str:
    return ", ".join(f"{table}.{c.strip()} AS {prefix}{c.strip()}" for c in cols.split(","))


# Session, current episode, latest summary and the newest reply of either kind (two index
# seeks on exchanges_window), in one statement.
STATE = (
    "SELECT s.id AS s_id, s.debug AS s_debug, s.debug_users AS s_debug_users,"
    " s.last_activity_at AS s_last_activity_at,"
    f" {_prefixed('e', EPISODE_COLS, 'e_')}, {_prefixed('m', SUMMARY_COLS, 'm_')},"
    " (SELECT x.reply_text FROM exchanges x WHERE x.id = GREATEST("
    "   (SELECT max(id) FROM exchanges WHERE episode_id = e.id AND signal),"
    "   (SELECT max(id) FROM exchanges WHERE episode_id = e.id AND NOT signal))) AS last_reply"
    " FROM sessions s JOIN episodes e ON e.id = s.current_episode_id"
    " LEFT JOIN LATERAL (SELECT * FROM summaries WHERE episode_id = e.id"
    "   ORDER BY version DESC LIMIT 1) m ON TRUE"
    " WHERE s.key = %(key)s"
)
# STATE and the last `window` signal exchanges with the pending ones before them (every
# signal row with id ≥ least(checkpoint + 1, window start): one range scan of
# exchanges_window), in one statement: a row per exchange (`x_…` columns, NULL when there
# is none), each carrying the state columns.
STATE_AND_WINDOW = (
    f"WITH st AS ({STATE}) SELECT st.*, {_prefixed('x', EXCHANGE_COLS, 'x_')} FROM st"
    " LEFT JOIN exchanges x ON x.episode_id = st.e_id AND x.signal"
    " AND x.id >= LEAST(COALESCE(st.m_checkpoint, 0) + 1, COALESCE((SELECT id FROM exchanges"
    "   WHERE episode_id = st.e_id AND signal ORDER BY id DESC LIMIT 1 OFFSET %(offset)s), 0))"
    " ORDER BY x.id"
)
SIGNAL = (
    f"SELECT {EXCHANGE_COLS} FROM exchanges WHERE episode_id = %(ep)s AND signal"
    " AND id > %(after)s AND (%(upto)s::bigint IS NULL OR id < %(upto)s)"
    " ORDER BY id LIMIT %(limit)s"
)

# -- sessions and episodes ---------------------------------------------------------------

SESSION_OF_KEY = "SELECT id, debug, current_episode_id FROM sessions WHERE key = %s"
SESSION_LOCK = "SELECT current_episode_id FROM sessions WHERE id = %s FOR UPDATE"
# Two workers meeting a new key at once: the second waits for the first's commit and
# inserts nothing (then reads the row the first made).
SESSION_INSERT = (
    "INSERT INTO sessions (key, created_at) VALUES (%s, %s)"
    " ON CONFLICT (key) DO NOTHING RETURNING id"
)
EPISODE_INSERT = (
    "INSERT INTO episodes (session_id, started_at, opened_by, reset_signals, carry_over)"
    " VALUES (%s, %s, %s, %s, %s) RETURNING id"
)
SESSION_CURRENT = "UPDATE sessions SET current_episode_id = %s WHERE id = %s"
EPISODE_CLOSE = "UPDATE episodes SET closed_at = %s, close_reason = %s WHERE id = %s"
EPISODES_LAST_TWO = (
    f"SELECT {EPISODE_COLS} FROM episodes WHERE session_id = %s ORDER BY id DESC LIMIT 2"
)
EPISODE_FOLDED = "SELECT 1 FROM summaries WHERE episode_id = %s LIMIT 1"
SUMMARIES_DROP = "DELETE FROM summaries WHERE episode_id = %s"
EXCHANGES_MOVE = "UPDATE exchanges SET episode_id = %s WHERE episode_id = %s"
EPISODE_DROP = "DELETE FROM episodes WHERE id = %s"
EPISODE_REOPEN = (
    "UPDATE episodes SET closed_at = NULL, close_reason = NULL, reopened_at = %s WHERE id = %s"
)
DEBUG_ON = (
    "UPDATE sessions SET debug = TRUE,"
    " debug_users = array_append(array_remove(debug_users, %(user)s), %(user)s)"
    " WHERE key = %(key)s"
)
DEBUG_OFF = (
    "UPDATE sessions SET debug_users = array_remove(debug_users, %(user)s),"
    " debug = cardinality(array_remove(debug_users, %(user)s)) > 0 WHERE key = %(key)s"
)

# -- inbox -------------------------------------------------------------------------------

# The debug flag read and the entry inserted (unless a dry run), in one statement.
INTAKE = (
    "WITH s AS (SELECT %(user)s = ANY(debug_users) AS debug, current_episode_id"
    "   FROM sessions WHERE key = %(key)s),"
    " ins AS (INSERT INTO inbox (session_key, external_id, user_ref, kind, text, received_at,"
    "   updated_at) SELECT %(key)s, %(external_id)s, %(user)s, %(kind)s, %(text)s, %(at)s,"
    "   %(at)s WHERE NOT (%(unless_debug)s AND COALESCE((SELECT debug FROM s), FALSE))"
    "   ON CONFLICT (session_key, external_id) DO NOTHING RETURNING id)"
    " SELECT (SELECT id FROM ins) AS id, COALESCE((SELECT debug FROM s), FALSE) AS debug,"
    " (SELECT current_episode_id FROM s) AS episode_id"
)
INBOX_GET = f"SELECT {INBOX_COLS} FROM inbox WHERE session_key = %s AND external_id = %s"
INBOX_UNFINISHED = (
    f"SELECT {INBOX_COLS} FROM inbox WHERE status <> 'done' AND status <> 'rejected' ORDER BY id"
)
# What the holder of a chat's lock runs: its pending entries up to one, oldest first; the
# last one also when answered, if the holder resends it (recovery after a crash).
INBOX_CLAIM = (
    f"SELECT {INBOX_COLS} FROM inbox WHERE session_key = %(key)s AND id <= %(upto)s"
    " AND (status = 'pending' OR (id = %(upto)s AND status = 'answered' AND %(resend)s))"
    " ORDER BY id"
)
INBOX_REJECT = (
    "INSERT INTO inbox (session_key, external_id, user_ref, kind, text, received_at,"
    " updated_at, status, reason) VALUES (%(key)s, %(external_id)s, '', 'rejected', '',"
    " %(at)s, %(at)s, 'rejected', %(reason)s)"
    " ON CONFLICT (session_key, external_id) DO NOTHING RETURNING id"
)
INBOX_MARK = (
    "UPDATE inbox SET status = %s, replies = COALESCE(%s, replies), attempts = attempts + 1,"
    " updated_at = %s WHERE id = %s"
)
INBOX_PRUNE = "DELETE FROM inbox WHERE status = 'done' AND updated_at < %s"

# -- exchanges and summaries -------------------------------------------------------------

# The exchange, its recall vector (signal only), the session's last activity and the
# inbox entry answered: one statement
# (data-modifying CTEs), so one round trip and atomic without BEGIN/COMMIT.
RECORD_EXCHANGE = (
    "WITH x AS (INSERT INTO exchanges (session_id, episode_id, external_id, user_text,"
    " reply_text, signal, noise_reason, stop_reason, prompt_tokens, reply_tokens, topic,"
    " created_at) VALUES (%(session)s, %(episode)s, %(external_id)s, %(user_text)s,"
    " %(reply_text)s, %(signal)s, %(noise_reason)s, %(stop_reason)s, %(prompt_tokens)s,"
    " %(reply_tokens)s, %(topic)s, %(at)s) RETURNING id),"
    " indexed AS (INSERT INTO recall_index (exchange_id, terms) SELECT id,"
    " %(recall)s::tsvector FROM x WHERE %(recall)s::tsvector IS NOT NULL),"
    " touched AS (UPDATE sessions SET last_activity_at = %(at)s WHERE id = %(session)s),"
    " answered AS (UPDATE inbox SET status = 'answered', replies = COALESCE(%(replies)s,"
    " replies), attempts = attempts + 1, updated_at = %(at)s WHERE id = %(inbox)s)"
    " SELECT id FROM x"
)
# The open episode, locked: a fold, a reset, an undo and a forget of one episode take
# turns, so a summary never lands in an episode closed or erased meanwhile.
EPISODE_OPEN_LOCK = "SELECT id FROM episodes WHERE id = %s AND closed_at IS NULL FOR UPDATE"
SUMMARY_LATEST = (
    "SELECT COALESCE(max(version), 0) AS latest, COALESCE(max(checkpoint), 0) AS checkpoint,"
    " COALESCE(max(round), 0) AS rounds FROM summaries WHERE episode_id = %s"
)
SUMMARY_INSERT = (
    "INSERT INTO summaries (episode_id, version, text, checkpoint, prompt_version, model,"
    " source_from, source_to, input_tokens, output_tokens, round, created_at, dropped_facts)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id"
)
SUMMARIES = f"SELECT {SUMMARY_COLS} FROM summaries WHERE episode_id = %s ORDER BY version"

# -- operators and erasure ---------------------------------------------------------------

EPISODES_OF_KEY = (
    f"SELECT {_prefixed('e', EPISODE_COLS, '')} FROM episodes e"
    " JOIN sessions s ON s.id = e.session_id WHERE s.key = %s ORDER BY e.id"
)
EXCHANGES_OF_KEY = (
    f"SELECT {_prefixed('x', EXCHANGE_COLS, '')} FROM exchanges x"
    " JOIN sessions s ON s.id = x.session_id WHERE s.key = %s ORDER BY x.id"
)
SESSIONS = (
    "SELECT s.key, s.created_at, s.last_activity_at, s.debug,"
    " (SELECT count(*) FROM exchanges x WHERE x.session_id = s.id) AS exchanges,"
    " (SELECT count(*) FROM exchanges x WHERE x.session_id = s.id AND NOT x.signal) AS noise,"
    " (SELECT count(*) FROM episodes e WHERE e.session_id = s.id) AS episodes,"
    " (SELECT count(*) FROM summaries m JOIN episodes e ON e.id = m.episode_id"
    "   WHERE e.session_id = s.id) AS summary_versions"
    " FROM sessions s ORDER BY COALESCE(s.last_activity_at, s.created_at) DESC"
)
EXPORT = {
    "session": "SELECT * FROM sessions WHERE key = %s",
    "episodes": (
        "SELECT e.* FROM episodes e JOIN sessions s ON s.id = e.session_id"
        " WHERE s.key = %s ORDER BY e.id"
    ),
    "exchanges": (
        "SELECT x.* FROM exchanges x JOIN sessions s ON s.id = x.session_id"
        " WHERE s.key = %s ORDER BY x.id"
    ),
    "summaries": (
        "SELECT m.* FROM summaries m JOIN episodes e ON e.id = m.episode_id"
        " JOIN sessions s ON s.id = e.session_id WHERE s.key = %s"
        " ORDER BY m.episode_id, m.version"
    ),
    "inbox": "SELECT * FROM inbox WHERE session_key = %s ORDER BY id",
}
FORGET_INBOX = "DELETE FROM inbox WHERE session_key = %s"
FORGET_SESSION = "DELETE FROM sessions WHERE key = %s"
