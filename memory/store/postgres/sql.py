"""Every SQL statement of `PostgresStore`, by what it does. Columns are aliased with a
prefix wherever one row carries several types (`rows.py` reads them by name)."""

from __future__ import annotations

EXCHANGE_COLS = "id, episode_id, user_text, reply_text, signal, noise_reason, created_at"
EPISODE_COLS = (
    "id, session_id, started_at, closed_at, close_reason, opened_by, reopened_at, carry_over,"
    " previous_case"
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


# What a chat's turn state is read from, as one value (`s` a sessions row): the session,
# its current episode, its newest exchange of either kind, its latest summary version and
# its debug flags. Equal stamps at two instants: the state read at the first still holds.
STAMP = (
    "row(s.id, s.current_episode_id, s.debug, s.debug_users,"
    " (SELECT max(id) FROM exchanges WHERE session_id = s.id),"
    " (SELECT max(version) FROM summaries WHERE episode_id = s.current_episode_id))::text"
)
# Session, current episode, latest summary and the newest reply of either kind (two index
# seeks on exchanges_window), in one statement.
STATE = (
    "SELECT s.id AS s_id, s.debug AS s_debug, s.debug_users AS s_debug_users,"
    f" s.last_activity_at AS s_last_activity_at, {STAMP} AS s_stamp,"
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
# exchanges_window), in one statement and one row: the exchanges as one JSON array of
# objects (`EXCHANGE_COLS` by name), oldest first (NULL when there is none). One row, not
# one per exchange: each row repeated the state's thirty columns (about 60 µs of the
# worker's CPU a turn to decode a full window and its pending ones). MATERIALIZED, or
# the state's subqueries (the stamp's two maxima, the last reply's lookups) run once per
# exchange.
_JSON_EXCHANGE = ", ".join(f"'{c.strip()}', x.{c.strip()}" for c in EXCHANGE_COLS.split(","))
STATE_AND_WINDOW = (
    f"WITH st AS MATERIALIZED ({STATE}) SELECT st.*, (SELECT json_agg(json_build_object("
    f" {_JSON_EXCHANGE}) ORDER BY x.id) FROM exchanges x WHERE x.episode_id = st.e_id AND x.signal"
    " AND x.id >= LEAST(COALESCE(st.m_checkpoint, 0) + 1, COALESCE((SELECT id FROM exchanges"
    "   WHERE episode_id = st.e_id AND signal ORDER BY id DESC LIMIT 1 OFFSET %(offset)s), 0))"
    " ) AS exchanges FROM st"
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
    "INSERT INTO episodes (session_id, started_at, opened_by, reset_signals, carry_over,"
    " previous_case) VALUES (%s, %s, %s, %s, %s, %s) RETURNING id"
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

# A message's intake in one call (migration 0008): the key's debug flag for `user` read;
# unless it is a dry run (`unless_debug` and debug on), the entry inserted once (the
# inbox's unique constraint dedupes deliveries to several workers) and, for a new chat,
# its session and first episode, all in one transaction. Two workers meeting a new key
# at once create it once (the second waits on the session's unique key, then reads it).
INTAKE_FUNCTION = """
CREATE OR REPLACE FUNCTION ventana_intake(
    p_key TEXT, p_external_id TEXT, p_user TEXT, p_kind TEXT, p_text TEXT,
    p_at TIMESTAMPTZ, p_unless_debug BOOLEAN,
    OUT entry_id BIGINT, OUT debug_on BOOLEAN, OUT episode BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
    found_id BIGINT;
BEGIN
    SELECT s.id, p_user = ANY(s.debug_users), s.current_episode_id
        INTO found_id, debug_on, episode FROM sessions s WHERE s.key = p_key;
    debug_on := COALESCE(debug_on, FALSE);
    IF debug_on AND p_unless_debug THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM erased_deliveries WHERE digest = encode(sha256(convert_to(
            p_key || '|' || p_external_id, 'UTF8')), 'hex')) THEN
        RETURN;  -- erased by /forget: a replay of it is a redelivery
    END IF;
    INSERT INTO inbox AS i (session_key, external_id, user_ref, kind, text, received_at,
                            updated_at)
        VALUES (p_key, p_external_id, p_user, p_kind, p_text, p_at, p_at)
        ON CONFLICT (session_key, external_id) DO NOTHING RETURNING i.id INTO entry_id;
    IF entry_id IS NULL OR episode IS NOT NULL THEN
        RETURN;
    END IF;
    INSERT INTO sessions AS s (key, created_at) VALUES (p_key, p_at)
        ON CONFLICT (key) DO NOTHING RETURNING s.id INTO found_id;
    IF found_id IS NULL THEN  -- made meanwhile, or left without an episode by a crash
        SELECT s.id, s.current_episode_id INTO found_id, episode
            FROM sessions s WHERE s.key = p_key FOR UPDATE;
        IF episode IS NOT NULL THEN
            RETURN;
        END IF;
    END IF;
    INSERT INTO episodes AS e (session_id, started_at) VALUES (found_id, p_at)
        RETURNING e.id INTO episode;
    UPDATE sessions SET current_episode_id = episode WHERE id = found_id;
END $$
"""
INTAKE = (
    "SELECT entry_id AS id, debug_on AS debug FROM ventana_intake(%(key)s, %(external_id)s,"
    " %(user)s, %(kind)s, %(text)s, %(at)s, %(unless_debug)s)"
)
INBOX_GET = f"SELECT {INBOX_COLS} FROM inbox WHERE session_key = %s AND external_id = %s"
INBOX_UNFINISHED = (
    f"SELECT {INBOX_COLS} FROM inbox WHERE status <> 'done' AND status <> 'rejected' ORDER BY id"
)
# The chat locks of one batch (`locks.py`) in one server-side call (migration 0011): the
# delivered entries' done marks, the unlocks, `pg_try_advisory_lock` over the keys asked,
# then the claims of the keys just locked. A row per unlock (`part` 'u', `ok` released)
# and per lock ('l', `ok` got), each numbered by its place in its list (`n`, from 0), then
# the claims' entries ('c', `n` the lock's place): its pending entries up to `upto`, oldest
# first; the last one also when answered, if the holder resends it (recovery after a
# crash), each row with the chat's stamp (`STAMP`). The function is VOLATILE, so each of
# its statements reads a fresh snapshot (READ COMMITTED): a claim, read after its lock is
# taken, sees every earlier holder's commits. Each statement is a lookup by key whose
# generic plan is its custom one, so a connection plans it once, not at every call.
LANE_FUNCTION = f"""
CREATE OR REPLACE FUNCTION ventana_lane(
    p_class INTEGER, p_marked BIGINT[], p_marked_at TIMESTAMPTZ[], p_unlock TEXT[],
    p_lock TEXT[], p_claim_n INTEGER[], p_claim_upto BIGINT[], p_claim_resend BOOLEAN[]
) RETURNS TABLE (part TEXT, n INTEGER, ok BOOLEAN, id BIGINT, session_key TEXT,
    external_id TEXT, user_ref TEXT, kind TEXT, text TEXT, received_at TIMESTAMPTZ,
    status TEXT, replies TEXT, reason TEXT, c_stamp TEXT) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    k INTEGER;
    chat TEXT;
BEGIN
    FOR k IN 1 .. coalesce(cardinality(p_marked), 0) LOOP
        UPDATE inbox i SET status = 'done', attempts = i.attempts + 1,
            updated_at = p_marked_at[k] WHERE i.id = p_marked[k];
    END LOOP;
    part := 'u';
    FOR k IN 1 .. coalesce(cardinality(p_unlock), 0) LOOP
        n := k - 1;
        ok := pg_advisory_unlock(p_class, hashtext(p_unlock[k]));
        RETURN NEXT;
    END LOOP;
    part := 'l';
    FOR k IN 1 .. coalesce(cardinality(p_lock), 0) LOOP
        n := k - 1;
        ok := pg_try_advisory_lock(p_class, hashtext(p_lock[k]));
        RETURN NEXT;
    END LOOP;
    FOR k IN 1 .. coalesce(cardinality(p_claim_n), 0) LOOP
        chat := p_lock[p_claim_n[k] + 1];
        RETURN QUERY SELECT 'c', p_claim_n[k], NULL::BOOLEAN, {_prefixed("i", INBOX_COLS, "")},
            (SELECT {STAMP} FROM sessions s WHERE s.key = chat)
            FROM inbox i WHERE i.session_key = chat AND i.id <= p_claim_upto[k]
            AND (i.status = 'pending' OR (i.id = p_claim_upto[k] AND i.status = 'answered'
                 AND p_claim_resend[k]))
            ORDER BY i.id;
    END LOOP;
END $$
"""
LANE = (
    "SELECT * FROM ventana_lane(%(class)s::integer, %(marked)s::bigint[],"
    " %(marked_at)s::timestamptz[], %(unlock)s::text[], %(lock)s::text[],"
    " %(claim_n)s::integer[], %(claim_upto)s::bigint[], %(claim_resend)s::boolean[])"
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
INBOX_PRUNE = "DELETE FROM inbox WHERE status IN ('done', 'rejected') AND updated_at < %s"

# -- exchanges and summaries -------------------------------------------------------------

# The exchange and what is written with it, one statement (data-modifying CTEs: one round
# trip, atomic without BEGIN/COMMIT). `x` is the new exchange (`x.id`); each entry of
# `EXCHANGE_WITH` is one more write that goes with it (a search index goes here too).
EXCHANGE_INSERT = (
    "INSERT INTO exchanges (session_id, episode_id, external_id, user_text, reply_text,"
    " signal, noise_reason, stop_reason, prompt_tokens, reply_tokens, topic, created_at)"
    " VALUES (%(session)s, %(episode)s, %(external_id)s, %(user_text)s, %(reply_text)s,"
    " %(signal)s, %(noise_reason)s, %(stop_reason)s, %(prompt_tokens)s, %(reply_tokens)s,"
    " %(topic)s, %(at)s) RETURNING id"
)
EXCHANGE_WITH = {
    # Its recall vector, signal exchanges only (`recall.py`).
    "indexed": (
        "INSERT INTO recall_index (exchange_id, terms) SELECT x.id, %(recall)s::tsvector"
        " FROM x WHERE %(recall)s::tsvector IS NOT NULL"
    ),
    "touched": "UPDATE sessions SET last_activity_at = %(at)s WHERE id = %(session)s",
    "answered": (
        "UPDATE inbox SET status = 'answered', replies = COALESCE(%(replies)s, replies),"
        " attempts = attempts + 1, updated_at = %(at)s WHERE id = %(inbox)s"
    ),
    # The chat call's usage, when the provider reported some (`migrations.USAGE_TABLE`).
    "used": (
        "INSERT INTO usage (session_id, purpose, model, input_tokens, output_tokens,"
        " cached_tokens, exchange_id, created_at) SELECT %(session)s, 'chat',"
        " %(usage_model)s, %(input_tokens)s, %(output_tokens)s, %(cached_tokens)s, x.id,"
        " %(at)s FROM x WHERE %(usage_model)s::text IS NOT NULL"
    ),
}
RECORD_EXCHANGE = (
    f"WITH x AS ({EXCHANGE_INSERT}), "
    + ", ".join(f"{name} AS ({write})" for name, write in EXCHANGE_WITH.items())
    + " SELECT id FROM x"
)
# The open episode, locked: a fold, a reset, an undo and a forget of one episode take
# turns, so a summary never lands in an episode closed or erased meanwhile.
EPISODE_OPEN_LOCK = "SELECT id FROM episodes WHERE id = %s AND closed_at IS NULL FOR UPDATE"
SUMMARY_LATEST = (
    "SELECT COALESCE(max(version), 0) AS latest, COALESCE(max(checkpoint), 0) AS checkpoint,"
    " COALESCE(max(round), 0) AS rounds FROM summaries WHERE episode_id = %s"
)
# The version and the fold's usage (all its summary-model calls), one statement.
SUMMARY_INSERT = (
    "WITH m AS (INSERT INTO summaries (episode_id, version, text, checkpoint, prompt_version,"
    " model, source_from, source_to, input_tokens, output_tokens, round, created_at,"
    " dropped_facts) VALUES (%(episode)s, %(version)s, %(text)s, %(checkpoint)s,"
    " %(prompt_version)s, %(model)s, %(source_from)s, %(source_to)s, %(input_tokens)s,"
    " %(output_tokens)s, %(round)s, %(at)s, %(dropped)s) RETURNING id),"
    " used AS (INSERT INTO usage (session_id, purpose, model, input_tokens, output_tokens,"
    " summary_id, created_at) SELECT e.session_id, 'fold', %(model)s, %(input_tokens)s,"
    " %(output_tokens)s, m.id, %(at)s FROM m, episodes e WHERE e.id = %(episode)s)"
    " SELECT id FROM m"
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
# What `/forget` keeps of the key's deliveries: their ids hashed (`delivery_digest`).
DIGEST = "encode(sha256(convert_to({key} || '|' || {external_id}, 'UTF8')), 'hex')"
FORGET_TOMBSTONES = (
    "INSERT INTO erased_deliveries (digest, erased_at) SELECT"
    f" {DIGEST.format(key='session_key', external_id='external_id')}, now()"
    " FROM inbox WHERE session_key = %s ON CONFLICT DO NOTHING"
)
TOMBSTONES_PRUNE = "DELETE FROM erased_deliveries WHERE erased_at < %s"
FORGET_INBOX = "DELETE FROM inbox WHERE session_key = %s"
FORGET_SESSION = "DELETE FROM sessions WHERE key = %s"
