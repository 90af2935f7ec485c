--
-- PostgreSQL database dump
--

\restrict SGhKZZ1VXoMsNbzQHDUyG4msr7X6cfVtA2PshomVnhFePShNlMYRSHpZ4CbmXNW

-- Dumped from database version 18.6
-- Dumped by pg_dump version 18.6

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET transaction_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: vector; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;


--
-- Name: EXTENSION vector; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION vector IS 'vector data type and ivfflat and hnsw access methods';


--
-- Name: instr(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.instr(haystack text, needle text) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$SELECT strpos(haystack, needle)$$;


--
-- Name: memory_entry_tag_lengths(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memory_entry_tag_lengths() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT m.namespace, m.search_length INTO NEW.namespace, NEW.search_length
        FROM memory_entries m WHERE m.seq = NEW.entry_seq;
    RETURN NEW;
END $$;


--
-- Name: memory_postings_added(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memory_postings_added() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    WITH added AS (INSERT INTO memory_postings SELECT * FROM memory_postings_of(ARRAY(SELECT n::memory_entries FROM new_entries n))
                   RETURNING namespace, term)
    INSERT INTO memory_term_counts AS c (namespace, term, entries)
        SELECT a.namespace, a.term, count(*) FROM added a GROUP BY a.namespace, a.term ORDER BY a.namespace, a.term
        ON CONFLICT (namespace, term) DO UPDATE SET entries = c.entries + EXCLUDED.entries;
    INSERT INTO memory_search_totals AS t (namespace, entries, total_length)
        SELECT n.namespace, count(*), sum(n.search_length) FROM new_entries n GROUP BY n.namespace ORDER BY n.namespace
        ON CONFLICT (namespace) DO UPDATE SET entries = t.entries + EXCLUDED.entries,
                                              total_length = t.total_length + EXCLUDED.total_length;
    RETURN NULL;
END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: memory_entries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_entries (
    seq bigint NOT NULL,
    namespace text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    subtask_id text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    type text NOT NULL COLLATE pg_catalog."C",
    summary text NOT NULL COLLATE pg_catalog."C",
    detail text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    source text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    created_at bigint NOT NULL,
    search tsvector GENERATED ALWAYS AS ((setweight(to_tsvector('english'::regconfig, summary), 'A'::"char") || setweight(to_tsvector('english'::regconfig, detail), 'B'::"char"))) STORED,
    search_length integer GENERATED ALWAYS AS ((regexp_count(summary, '[[:alnum:]]+'::text) + regexp_count(detail, '[[:alnum:]]+'::text))) STORED,
    expires_at bigint,
    capped smallint DEFAULT 0 NOT NULL
);


--
-- Name: memory_postings_of(public.memory_entries[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memory_postings_of(entries public.memory_entries[]) RETURNS TABLE(namespace text, term text, seq bigint, task_id text, frequency integer, length integer)
    LANGUAGE sql STABLE
    AS $$
    SELECT e.namespace, l.lexeme, e.seq, e.task_id,
           (SELECT coalesce(sum(CASE w WHEN 'A' THEN 2 WHEN 'B' THEN 1 ELSE 0 END), 0)::int FROM unnest(l.weights) w),
           e.search_length
    FROM unnest(entries) e, unnest(e.search) l
$$;


--
-- Name: memory_postings_removed(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memory_postings_removed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    removed memory_entries[] := ARRAY(SELECT o FROM old_entries o);
BEGIN
    DELETE FROM memory_postings p USING memory_postings_of(removed) r
        WHERE p.namespace = r.namespace AND p.term = r.term AND p.seq = r.seq;
    UPDATE memory_term_counts c SET entries = c.entries - r.entries
        FROM (SELECT r.namespace, r.term, count(*) AS entries FROM memory_postings_of(removed) r
              GROUP BY r.namespace, r.term) r
        WHERE c.namespace = r.namespace AND c.term = r.term;
    UPDATE memory_search_totals t SET entries = t.entries - r.entries, total_length = t.total_length - r.total_length
        FROM (SELECT o.namespace, count(*) AS entries, sum(o.search_length) AS total_length FROM old_entries o
              GROUP BY o.namespace) r
        WHERE t.namespace = r.namespace;
    RETURN NULL;
END $$;


--
-- Name: memory_text_unchanged(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.memory_text_unchanged() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.namespace IS DISTINCT FROM OLD.namespace OR NEW.task_id IS DISTINCT FROM OLD.task_id
            OR NEW.summary IS DISTINCT FROM OLD.summary
            OR NEW.detail IS DISTINCT FROM OLD.detail OR NEW.seq IS DISTINCT FROM OLD.seq THEN
        RAISE EXCEPTION 'memory entries are immutable: the search postings (migration 0013) index their text';
    END IF;
    RETURN NEW;
END $$;


--
-- Name: action_logs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.action_logs (
    namespace text NOT NULL COLLATE pg_catalog."C",
    action_id text NOT NULL COLLATE pg_catalog."C",
    sequence bigint NOT NULL,
    stream text NOT NULL COLLATE pg_catalog."C",
    content text NOT NULL COLLATE pg_catalog."C",
    created_at bigint NOT NULL
);


--
-- Name: actions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.actions (
    namespace text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    plan_item_id text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    type text NOT NULL COLLATE pg_catalog."C",
    tool_name text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    summary text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL COLLATE pg_catalog."C",
    input text DEFAULT '{}'::text NOT NULL COLLATE pg_catalog."C",
    output text DEFAULT '{}'::text NOT NULL COLLATE pg_catalog."C",
    error text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    duration_us bigint,
    tokens_in bigint DEFAULT 0 NOT NULL,
    tokens_out bigint DEFAULT 0 NOT NULL,
    log_lines bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    completed_at bigint
);


--
-- Name: artifacts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.artifacts (
    seq bigint NOT NULL,
    namespace text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    agent_id text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    type text NOT NULL COLLATE pg_catalog."C",
    path text NOT NULL COLLATE pg_catalog."C",
    description text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    size_bytes bigint,
    sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    created_at bigint NOT NULL
);


--
-- Name: artifacts_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.artifacts ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.artifacts_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: context_snapshots; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.context_snapshots (
    namespace text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    sequence bigint NOT NULL,
    label text NOT NULL COLLATE pg_catalog."C",
    content text NOT NULL COLLATE pg_catalog."C",
    summarized bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: episodes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.episodes (
    seq bigint NOT NULL,
    namespace text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    agent_id text NOT NULL COLLATE pg_catalog."C",
    action text NOT NULL COLLATE pg_catalog."C",
    approach text NOT NULL COLLATE pg_catalog."C",
    outcome text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    duration_us bigint,
    tokens_in bigint DEFAULT 0 NOT NULL,
    tokens_out bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    archived_at bigint,
    expires_at bigint
);


--
-- Name: episodes_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.episodes ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.episodes_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: event_cursor; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_cursor (
    id bigint NOT NULL,
    last bigint NOT NULL,
    silent_commits bigint DEFAULT 0 NOT NULL,
    CONSTRAINT event_cursor_id_check CHECK ((id = 1))
);


--
-- Name: event_retention; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_retention (
    namespace text NOT NULL COLLATE pg_catalog."C",
    cursor bigint NOT NULL,
    recorded_at bigint NOT NULL
);


--
-- Name: events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.events (
    cursor bigint NOT NULL,
    namespace text NOT NULL COLLATE pg_catalog."C",
    type text NOT NULL COLLATE pg_catalog."C",
    task_id text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    correlation_id text NOT NULL COLLATE pg_catalog."C",
    payload text NOT NULL COLLATE pg_catalog."C",
    created_at bigint NOT NULL,
    expires_at bigint
);


--
-- Name: knowledge; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.knowledge (
    namespace text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    category text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    value text NOT NULL COLLATE pg_catalog."C",
    source text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    confidence double precision NOT NULL,
    revision bigint DEFAULT 1 NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    valid_from bigint DEFAULT 0 NOT NULL
);


--
-- Name: knowledge_history; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.knowledge_history (
    seq bigint NOT NULL,
    namespace text NOT NULL COLLATE pg_catalog."C",
    knowledge_id text NOT NULL COLLATE pg_catalog."C",
    value text NOT NULL COLLATE pg_catalog."C",
    source text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    confidence double precision NOT NULL,
    outcome text NOT NULL COLLATE pg_catalog."C",
    written_at bigint NOT NULL,
    recorded_at bigint NOT NULL
);


--
-- Name: knowledge_history_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.knowledge_history ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.knowledge_history_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: learned_patterns; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.learned_patterns (
    namespace text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    pattern_type text NOT NULL COLLATE pg_catalog."C",
    pattern_key text NOT NULL COLLATE pg_catalog."C",
    data text DEFAULT '{}'::text NOT NULL COLLATE pg_catalog."C",
    frequency bigint DEFAULT 1 NOT NULL,
    created_at bigint NOT NULL,
    last_seen bigint NOT NULL
);


--
-- Name: leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.leases (
    name text NOT NULL COLLATE pg_catalog."C",
    holder text NOT NULL COLLATE pg_catalog."C",
    expires_at bigint NOT NULL
);


--
-- Name: memory_embedding_model; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_embedding_model (
    id bigint NOT NULL,
    model text NOT NULL COLLATE pg_catalog."C",
    dimension bigint NOT NULL,
    recorded_at bigint NOT NULL,
    CONSTRAINT memory_embedding_model_id_check CHECK ((id = 1))
);


--
-- Name: memory_embedding_queue; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_embedding_queue (
    seq bigint NOT NULL,
    claimed_by text COLLATE pg_catalog."C",
    claim_expires_at bigint
);


--
-- Name: memory_embeddings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_embeddings (
    seq bigint NOT NULL,
    embedding public.vector NOT NULL
);


--
-- Name: memory_entries_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.memory_entries ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.memory_entries_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: memory_entry_relevance; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_entry_relevance (
    subtask_id text NOT NULL COLLATE pg_catalog."C",
    entry_seq bigint NOT NULL
);


--
-- Name: memory_entry_tags; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_entry_tags (
    tag text NOT NULL COLLATE pg_catalog."C",
    entry_seq bigint NOT NULL,
    namespace text COLLATE pg_catalog."C",
    search_length integer
);


--
-- Name: memory_postings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_postings (
    namespace text NOT NULL COLLATE pg_catalog."C",
    term text NOT NULL COLLATE pg_catalog."C",
    seq bigint NOT NULL,
    task_id text NOT NULL COLLATE pg_catalog."C",
    frequency integer NOT NULL,
    length integer NOT NULL
);


--
-- Name: memory_search_totals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_search_totals (
    namespace text NOT NULL COLLATE pg_catalog."C",
    entries bigint NOT NULL,
    total_length bigint NOT NULL
);


--
-- Name: memory_term_counts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memory_term_counts (
    namespace text NOT NULL COLLATE pg_catalog."C",
    term text NOT NULL COLLATE pg_catalog."C",
    entries bigint NOT NULL
);


--
-- Name: messages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.messages (
    namespace text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    thread_id text NOT NULL COLLATE pg_catalog."C",
    task_id text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    role text NOT NULL COLLATE pg_catalog."C",
    kind text NOT NULL COLLATE pg_catalog."C",
    content text NOT NULL COLLATE pg_catalog."C",
    created_at bigint NOT NULL,
    expires_at bigint,
    capped smallint DEFAULT 0 NOT NULL
);


--
-- Name: model_calls; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.model_calls (
    namespace text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    purpose text NOT NULL COLLATE pg_catalog."C",
    model text NOT NULL COLLATE pg_catalog."C",
    outcome text NOT NULL COLLATE pg_catalog."C",
    tokens_in bigint NOT NULL,
    tokens_out bigint NOT NULL,
    latency_us bigint NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: model_usage_totals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.model_usage_totals (
    namespace text NOT NULL COLLATE pg_catalog."C",
    tokens bigint NOT NULL
);


--
-- Name: plan_item_claims; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.plan_item_claims (
    namespace text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    item_id text NOT NULL COLLATE pg_catalog."C",
    holder text NOT NULL COLLATE pg_catalog."C",
    claimed_at bigint NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: plan_items; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.plan_items (
    namespace text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    plan_version bigint NOT NULL,
    id text NOT NULL COLLATE pg_catalog."C",
    ordinal bigint NOT NULL,
    stage text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    title text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL COLLATE pg_catalog."C",
    summary text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    active_issue text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    depends_on text DEFAULT '[]'::text NOT NULL COLLATE pg_catalog."C",
    tool_name text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    input text DEFAULT '{}'::text NOT NULL COLLATE pg_catalog."C",
    narrative text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    started_at bigint,
    completed_at bigint,
    duration_us bigint,
    status_source text DEFAULT 'PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED'::text NOT NULL COLLATE pg_catalog."C",
    status_message_id text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: plans; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.plans (
    namespace text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    version bigint NOT NULL,
    reason text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    created_at bigint NOT NULL
);


--
-- Name: request_ids; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.request_ids (
    namespace text NOT NULL COLLATE pg_catalog."C",
    request_id text NOT NULL COLLATE pg_catalog."C",
    method text NOT NULL COLLATE pg_catalog."C",
    request_hash text NOT NULL COLLATE pg_catalog."C",
    response bytea NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: running_summaries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.running_summaries (
    namespace text NOT NULL COLLATE pg_catalog."C",
    thread_id text NOT NULL COLLATE pg_catalog."C",
    summary text NOT NULL COLLATE pg_catalog."C",
    message_count bigint NOT NULL,
    last_message_created_at bigint NOT NULL,
    last_message_id text NOT NULL COLLATE pg_catalog."C",
    updated_at bigint NOT NULL
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    number bigint NOT NULL,
    name text NOT NULL
);


--
-- Name: state_item_embeddings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.state_item_embeddings (
    namespace text NOT NULL COLLATE pg_catalog."C",
    thread_id text NOT NULL COLLATE pg_catalog."C",
    uid text NOT NULL COLLATE pg_catalog."C",
    model text NOT NULL COLLATE pg_catalog."C",
    vector bytea NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: state_item_entries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.state_item_entries (
    namespace text NOT NULL COLLATE pg_catalog."C",
    thread_id text NOT NULL COLLATE pg_catalog."C",
    uid text NOT NULL COLLATE pg_catalog."C",
    memory_entry_id text NOT NULL COLLATE pg_catalog."C",
    kind text NOT NULL COLLATE pg_catalog."C",
    subtask_id text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    detail text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    created_at bigint NOT NULL
);


--
-- Name: state_items; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.state_items (
    namespace text NOT NULL COLLATE pg_catalog."C",
    thread_id text NOT NULL COLLATE pg_catalog."C",
    uid text NOT NULL COLLATE pg_catalog."C",
    type_tag text NOT NULL COLLATE pg_catalog."C",
    text text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL COLLATE pg_catalog."C",
    confidence text DEFAULT 'medium'::text NOT NULL COLLATE pg_catalog."C",
    topic_tags text DEFAULT '[]'::text NOT NULL COLLATE pg_catalog."C",
    refs text DEFAULT '[]'::text NOT NULL COLLATE pg_catalog."C",
    replaced_by text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    supersession_evidence text DEFAULT '{}'::text NOT NULL COLLATE pg_catalog."C",
    conflict bigint DEFAULT 0 NOT NULL,
    conflict_with text DEFAULT '[]'::text NOT NULL COLLATE pg_catalog."C",
    pinned bigint DEFAULT 0 NOT NULL,
    source text DEFAULT 'extraction'::text NOT NULL COLLATE pg_catalog."C",
    created_at bigint NOT NULL,
    last_seen_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    valid_to bigint,
    prior_status text DEFAULT ''::text NOT NULL
);


--
-- Name: state_watermarks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.state_watermarks (
    namespace text NOT NULL COLLATE pg_catalog."C",
    thread_id text NOT NULL COLLATE pg_catalog."C",
    last_message_created_at bigint NOT NULL,
    last_message_id text NOT NULL COLLATE pg_catalog."C",
    updated_at bigint NOT NULL
);


--
-- Name: tasks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tasks (
    namespace text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    goal text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL COLLATE pg_catalog."C",
    paused_from text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    workspace text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    context text DEFAULT '{}'::text NOT NULL COLLATE pg_catalog."C",
    metadata text DEFAULT '{}'::text NOT NULL COLLATE pg_catalog."C",
    approval_mode text NOT NULL COLLATE pg_catalog."C",
    callback_url text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    final_answer text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    error_summary text DEFAULT '{}'::text NOT NULL COLLATE pg_catalog."C",
    plan_version bigint DEFAULT 0 NOT NULL,
    revision bigint DEFAULT 1 NOT NULL,
    created_at bigint NOT NULL,
    plan_generated_at bigint,
    execution_started_at bigint,
    synthesis_started_at bigint,
    completed_at bigint,
    paused_at bigint,
    archived_at bigint,
    updated_at bigint NOT NULL,
    webhook_event_types text DEFAULT '[]'::text NOT NULL COLLATE pg_catalog."C",
    plan_inference_disabled bigint DEFAULT 0 NOT NULL,
    forked_from text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    forked_at bigint DEFAULT 0 NOT NULL
);


--
-- Name: waits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.waits (
    namespace text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    task_id text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    criteria text NOT NULL COLLATE pg_catalog."C",
    kind text NOT NULL COLLATE pg_catalog."C",
    target text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL COLLATE pg_catalog."C",
    result text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    timeout_us bigint,
    poll_interval_us bigint,
    start_cursor bigint DEFAULT 0 NOT NULL,
    correlation_id text NOT NULL COLLATE pg_catalog."C",
    forced bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    ended_at bigint,
    claimed_by text COLLATE pg_catalog."C",
    claim_expires_at bigint
);


--
-- Name: webhook_cursors; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_cursors (
    namespace text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    delivered_cursor bigint NOT NULL
);


--
-- Name: webhook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_deliveries (
    namespace text NOT NULL COLLATE pg_catalog."C",
    task_id text NOT NULL COLLATE pg_catalog."C",
    cursor bigint NOT NULL,
    event_type text NOT NULL COLLATE pg_catalog."C",
    url text NOT NULL COLLATE pg_catalog."C",
    state text NOT NULL COLLATE pg_catalog."C",
    attempts bigint NOT NULL,
    last_status_code bigint DEFAULT 0 NOT NULL,
    last_error text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    first_attempt_at bigint NOT NULL,
    last_attempt_at bigint NOT NULL,
    next_attempt_at bigint
);


--
-- Name: webhook_secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_secrets (
    namespace text NOT NULL COLLATE pg_catalog."C",
    secret text NOT NULL COLLATE pg_catalog."C",
    created_at bigint NOT NULL,
    previous_secret text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    previous_until bigint DEFAULT 0 NOT NULL
);


--
-- Name: working_memories; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.working_memories (
    namespace text CONSTRAINT working_memory_snapshots_namespace_not_null NOT NULL COLLATE pg_catalog."C",
    agent_id text CONSTRAINT working_memory_snapshots_agent_id_not_null NOT NULL COLLATE pg_catalog."C",
    document text CONSTRAINT working_memory_snapshots_document_not_null NOT NULL COLLATE pg_catalog."C",
    updated_at bigint CONSTRAINT working_memory_snapshots_updated_at_not_null NOT NULL
);


--
-- Data for Name: action_logs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.action_logs VALUES ('default', 'act_01a24d4e71544bbbd2a1a7f8', 1, 'stdout', 'loading 41 tables', 1796593316187584);
INSERT INTO public.action_logs VALUES ('default', 'act_01a24d4e71544bbbd2a1a7f8', 2, 'stderr', 'warning: DATETIME(6) truncated to timestamp(6)', 1796593316187584);


--
-- Data for Name: actions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.actions VALUES ('default', 'act_01a24d4e71494a41f10ce025', 'tsk_01a24d4e70c78530a4f94f7c', 'dump', 'ACTION_TYPE_CLI', 'mysqldump', 'mysqldump --no-data billing', 'ACTION_STATUS_SUCCEEDED', '{"args": ["--no-data", "billing"]}', '{"tables": 41.0}', '', 3000000, 120, 40, 0, 1796593316169341, 1796593316169341);
INSERT INTO public.actions VALUES ('default', 'act_01a24d4e71544bbbd2a1a7f8', 'tsk_01a24d4e70c78530a4f94f7c', 'convert', 'ACTION_TYPE_TOOL', 'pgloader', 'pgloader dry run', 'ACTION_STATUS_RUNNING', '{}', '{}', '', NULL, 0, 0, 2, 1796593316180109, NULL);
INSERT INTO public.actions VALUES ('default', 'act_01a24d4e71677656a1045a31', 'tsk_01a24d4e70c78530a4f94f7c', 'convert', 'ACTION_TYPE_CLI', '', 'psql -f schema.sql', 'ACTION_STATUS_FAILED', '{}', '{}', 'ERROR: type "tinyint" does not exist', 8827, 0, 0, 0, 1796593316199948, 1796593316208775);


--
-- Data for Name: artifacts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.artifacts VALUES (1, 'default', 'art_01a24d4e739931f5d70f1575', 'tsk_01a24d4e70c78530a4f94f7c', 'fixture-agent', 'ARTIFACT_TYPE_FILE', 'out/schema.sql', 'converted schema', 35, '15cac47d6cfc733bc8e5e448a5b1e74a2af7ba78fa0b8b093c885181d38de5fe', 1796593316760577);


--
-- Data for Name: context_snapshots; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.context_snapshots VALUES ('default', 'ctx_01a24d4e71aaa334da81c1e4', 'tsk_01a24d4e70c78530a4f94f7c', 0, 'before cutover', 'plan v2, convert in progress', 1, 1796593316266191);


--
-- Data for Name: episodes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.episodes VALUES (1, 'default', 'epi_01a24d4e735e61b28935ec11', 'tsk_01a24d4e70c78530a4f94f7c', 'fixture-agent', 'EPISODE_ACTION_FAILED', 'load with COPY', 'pool exhausted', 90000000, 0, 0, 1796593316602784, NULL, NULL);


--
-- Data for Name: event_cursor; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.event_cursor VALUES (1, 39, 3);


--
-- Data for Name: event_retention; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.events VALUES (1, 'default', 'EVENT_TYPE_TASK_CREATED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e70c7d54b7ddec2bb', '{"id":"tsk_01a24d4e70c78530a4f94f7c","namespace":"default","name":"Migrate the billing database","goal":"Move billing from MySQL to PostgreSQL without downtime","status":"TASK_STATUS_PENDING","workspace":"/srv/billing","context":{"owner":"dana","ticket":"OPS-118"},"metadata":{"team":"payments"},"approval_mode":"APPROVAL_MODE_AUTO","plan_version":1,"etag":"W/\"1\"","create_time":"2026-12-06T21:41:56.039754Z","plan_generate_time":"2026-12-06T21:41:56.039754Z","update_time":"2026-12-06T21:41:56.039754Z"}', 1796593316039754, NULL);
INSERT INTO public.events VALUES (2, 'default', 'EVENT_TYPE_PLAN_REPLACED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e70c7d54b7ddec2bb', '{"task_id":"tsk_01a24d4e70c78530a4f94f7c","version":1,"items":[{"id":"dump","stage":"prepare","title":"Dump the MySQL schema","status":"PLAN_ITEM_STATUS_PENDING"},{"id":"convert","ordinal":1,"stage":"prepare","title":"Convert types","status":"PLAN_ITEM_STATUS_PENDING","depends_on":["dump"]},{"id":"cutover","ordinal":2,"stage":"execute","title":"Cut over","status":"PLAN_ITEM_STATUS_PENDING","depends_on":["convert"],"tool_name":"deploy","input":{"window":"02:00"}}],"reason":"initial plan","create_time":"2026-12-06T21:41:56.039754Z"}', 1796593316039754, NULL);
INSERT INTO public.events VALUES (3, 'default', 'EVENT_TYPE_TASK_CREATED', 'tsk_01a24d4e70fe6ef561323782', 'cor_01a24d4e70fea0770b6bb24b', '{"id":"tsk_01a24d4e70fe6ef561323782","namespace":"default","name":"Rotate the TLS certificates","status":"TASK_STATUS_PENDING","approval_mode":"APPROVAL_MODE_AUTO","etag":"W/\"1\"","create_time":"2026-12-06T21:41:56.094803Z","update_time":"2026-12-06T21:41:56.094803Z"}', 1796593316094803, NULL);
INSERT INTO public.events VALUES (4, 'default', 'EVENT_TYPE_PLAN_REPLACED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7115bf94da07e02b', '{"task_id":"tsk_01a24d4e70c78530a4f94f7c","version":2,"items":[{"id":"dump","stage":"prepare","title":"Dump the MySQL schema","status":"PLAN_ITEM_STATUS_PENDING"},{"id":"convert","ordinal":1,"stage":"prepare","title":"Convert types","status":"PLAN_ITEM_STATUS_PENDING","depends_on":["dump"]},{"id":"dry-run","ordinal":2,"stage":"execute","title":"Dry run on staging","status":"PLAN_ITEM_STATUS_PENDING","depends_on":["convert"]},{"id":"cutover","ordinal":3,"stage":"execute","title":"Cut over","status":"PLAN_ITEM_STATUS_PENDING","depends_on":["dry-run"]}],"reason":"a dry run first","create_time":"2026-12-06T21:41:56.121962Z"}', 1796593316121962, NULL);
INSERT INTO public.events VALUES (5, 'default', 'EVENT_TYPE_PLAN_ITEM_UPDATED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e71304a98f6c73e9c', '{"id":"dump","stage":"prepare","title":"Dump the MySQL schema","status":"PLAN_ITEM_STATUS_COMPLETED","summary":"schema dumped: 41 tables","complete_time":"2026-12-06T21:41:56.148125Z","status_source":"PLAN_ITEM_STATUS_SOURCE_EXPLICIT","plan_version":2}', 1796593316148125, NULL);
INSERT INTO public.events VALUES (6, 'default', 'EVENT_TYPE_PLAN_ITEM_UPDATED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e713fec66510c5efe', '{"id":"convert","ordinal":1,"stage":"prepare","title":"Convert types","status":"PLAN_ITEM_STATUS_IN_PROGRESS","active_issue":"DATETIME(6) columns","depends_on":["dump"],"start_time":"2026-12-06T21:41:56.160095Z","status_source":"PLAN_ITEM_STATUS_SOURCE_EXPLICIT","plan_version":2}', 1796593316160095, NULL);
INSERT INTO public.events VALUES (7, 'default', 'EVENT_TYPE_ACTION_RECORDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7148e40ad5ca6c05', '{"id":"act_01a24d4e71494a41f10ce025","task_id":"tsk_01a24d4e70c78530a4f94f7c","plan_item_id":"dump","type":"ACTION_TYPE_CLI","tool_name":"mysqldump","summary":"mysqldump --no-data billing","status":"ACTION_STATUS_SUCCEEDED","input":{"args":["--no-data","billing"]},"output":{"tables":41.0},"duration":"3.000000s","tokens_in":"120","tokens_out":"40","create_time":"2026-12-06T21:41:56.169341Z","complete_time":"2026-12-06T21:41:56.169341Z"}', 1796593316169341, NULL);
INSERT INTO public.events VALUES (8, 'default', 'EVENT_TYPE_ACTION_RECORDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e715322a7bec84102', '{"id":"act_01a24d4e71544bbbd2a1a7f8","task_id":"tsk_01a24d4e70c78530a4f94f7c","plan_item_id":"convert","type":"ACTION_TYPE_TOOL","tool_name":"pgloader","summary":"pgloader dry run","status":"ACTION_STATUS_RUNNING","create_time":"2026-12-06T21:41:56.180109Z"}', 1796593316180109, NULL);
INSERT INTO public.events VALUES (9, 'default', 'EVENT_TYPE_ACTION_LOG_APPENDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e715a3301c3b2cee4', '{"action_id":"act_01a24d4e71544bbbd2a1a7f8","first_sequence":1,"last_sequence":2}', 1796593316187584, NULL);
INSERT INTO public.events VALUES (10, 'default', 'EVENT_TYPE_ACTION_RECORDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e71678de4872368cb', '{"id":"act_01a24d4e71677656a1045a31","task_id":"tsk_01a24d4e70c78530a4f94f7c","plan_item_id":"convert","type":"ACTION_TYPE_CLI","summary":"psql -f schema.sql","status":"ACTION_STATUS_RUNNING","create_time":"2026-12-06T21:41:56.199948Z"}', 1796593316199948, NULL);
INSERT INTO public.events VALUES (11, 'default', 'EVENT_TYPE_ACTION_COMPLETED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7170eced61c54b3e', '{"id":"act_01a24d4e71677656a1045a31","task_id":"tsk_01a24d4e70c78530a4f94f7c","plan_item_id":"convert","type":"ACTION_TYPE_CLI","summary":"psql -f schema.sql","status":"ACTION_STATUS_FAILED","error":"ERROR: type \"tinyint\" does not exist","duration":"0.008827s","create_time":"2026-12-06T21:41:56.199948Z","complete_time":"2026-12-06T21:41:56.208775Z"}', 1796593316208775, NULL);
INSERT INTO public.events VALUES (12, 'default', 'EVENT_TYPE_MESSAGE_POSTED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e717d69ff512fce51', '{"id":"msg_01a24d4e717da6ed2f8f2ff6","task_id":"tsk_01a24d4e70c78530a4f94f7c","thread_id":"tsk_01a24d4e70c78530a4f94f7c","role":"MESSAGE_ROLE_USER","kind":"MESSAGE_KIND_TEXT","content":"Please move billing to PostgreSQL this week.","create_time":"2026-12-06T21:41:56.221757Z"}', 1796593316221757, NULL);
INSERT INTO public.events VALUES (13, 'default', 'EVENT_TYPE_MESSAGE_POSTED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e718731162894b04b', '{"id":"msg_01a24d4e71882a3ac7a67a91","task_id":"tsk_01a24d4e70c78530a4f94f7c","thread_id":"tsk_01a24d4e70c78530a4f94f7c","role":"MESSAGE_ROLE_AGENT","kind":"MESSAGE_KIND_TEXT","content":"Dumped the schema: 41 tables.","create_time":"2026-12-06T21:41:56.232262Z"}', 1796593316232262, NULL);
INSERT INTO public.events VALUES (14, 'default', 'EVENT_TYPE_MESSAGE_POSTED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e718f4cc3327339ae', '{"id":"msg_01a24d4e718fdef5365f4714","task_id":"tsk_01a24d4e70c78530a4f94f7c","thread_id":"tsk_01a24d4e70c78530a4f94f7c","role":"MESSAGE_ROLE_TOOL","kind":"MESSAGE_KIND_TEXT","content":"pgloader: DATETIME(6) truncated","create_time":"2026-12-06T21:41:56.239744Z"}', 1796593316239744, NULL);
INSERT INTO public.events VALUES (15, 'default', 'EVENT_TYPE_MESSAGE_POSTED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e71972d3f5c22069d', '{"id":"msg_01a24d4e7198fbae9bef54f3","task_id":"tsk_01a24d4e70c78530a4f94f7c","thread_id":"tsk_01a24d4e70c78530a4f94f7c","role":"MESSAGE_ROLE_USER","kind":"MESSAGE_KIND_TEXT","content":"Use PostgreSQL 16, not 15.","create_time":"2026-12-06T21:41:56.248083Z"}', 1796593316248083, NULL);
INSERT INTO public.events VALUES (16, 'default', 'EVENT_TYPE_MESSAGE_POSTED', '', 'cor_01a24d4e71a13b77a2158750', '{"id":"msg_01a24d4e71a24805e5ba7ba6","thread_id":"standup","role":"MESSAGE_ROLE_USER","kind":"MESSAGE_KIND_TEXT","content":"what is blocking billing?","create_time":"2026-12-06T21:41:56.258273Z"}', 1796593316258273, NULL);
INSERT INTO public.events VALUES (17, 'default', 'EVENT_TYPE_CONTEXT_SNAPSHOT_RECORDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e71a92ce4999f8645', '{"id":"ctx_01a24d4e71aaa334da81c1e4","task_id":"tsk_01a24d4e70c78530a4f94f7c","label":"before cutover","summarized":true,"create_time":"2026-12-06T21:41:56.266191Z","content":""}', 1796593316266191, NULL);
INSERT INTO public.events VALUES (35, 'default', 'EVENT_TYPE_MESSAGE_POSTED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7a33790b2969b749', '{"id":"msg_01a24d4e7a36ddd2d35e4db8","task_id":"tsk_01a24d4e70c78530a4f94f7c","thread_id":"tsk_01a24d4e70c78530a4f94f7c","role":"MESSAGE_ROLE_SYSTEM","kind":"MESSAGE_KIND_WAIT","content":"[Wait started] staging settles","create_time":"2026-12-06T21:41:58.453359Z"}', 1796593318453359, NULL);
INSERT INTO public.events VALUES (18, 'default', 'EVENT_TYPE_MEMORY_ENTRY_ADDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e71bab75fb22e321e', '{"id":"mem_01a24d4e71bcbdedca7d9623","task_id":"tsk_01a24d4e70c78530a4f94f7c","subtask_id":"convert","type":"MEMORY_TYPE_ERROR","summary":"The connection pool was exhausted during the bulk load","detail":"pgbouncer pool_size 20; raised to 50","tags":["load","pgbouncer"],"source":"api","create_time":"2026-12-06T21:41:56.283437Z"}', 1796593316283437, NULL);
INSERT INTO public.events VALUES (19, 'default', 'EVENT_TYPE_MEMORY_ENTRY_ADDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e71bab75fb22e321e', '{"id":"mem_01a24d4e71c86c955fa8cac0","task_id":"tsk_01a24d4e70c78530a4f94f7c","type":"MEMORY_TYPE_DECISION","summary":"We chose PostgreSQL 16 as the target engine","tags":["engine"],"relevance_to":["cutover"],"source":"api","create_time":"2026-12-06T21:41:56.283437Z"}', 1796593316283437, NULL);
INSERT INTO public.events VALUES (20, 'default', 'EVENT_TYPE_MEMORY_ENTRY_ADDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e71bab75fb22e321e', '{"id":"mem_01a24d4e71d252325b3f44ec","task_id":"tsk_01a24d4e70c78530a4f94f7c","type":"MEMORY_TYPE_DISCOVERY","summary":"The integration test for invoices fails intermittently","tags":["tests"],"source":"api","create_time":"2026-12-06T21:41:56.283437Z"}', 1796593316283437, NULL);
INSERT INTO public.events VALUES (21, 'default', 'EVENT_TYPE_MEMORY_ENTRY_ADDED', 'tsk_01a24d4e70fe6ef561323782', 'cor_01a24d4e71bab75fb22e321e', '{"id":"mem_01a24d4e71d5e2adbea7b5f0","task_id":"tsk_01a24d4e70fe6ef561323782","type":"MEMORY_TYPE_TOOL_RESULT","summary":"certbot renewed 3 certificates","source":"api","create_time":"2026-12-06T21:41:56.283437Z"}', 1796593316283437, NULL);
INSERT INTO public.events VALUES (22, 'default', 'EVENT_TYPE_KNOWLEDGE_UPSERTED', '', 'cor_01a24d4e71ec07bca1a751b0', '{"id":"kn_01a24d4e71ed1cd5d18f4486","category":"KNOWLEDGE_CATEGORY_ARCHITECTURE","key":"billing.database","value":"PostgreSQL 16","source":"decision","confidence":0.9,"revision":"1","create_time":"2026-12-06T21:41:56.333005Z","update_time":"2026-12-06T21:41:56.333005Z","valid_from":"2026-12-06T21:41:56.333005Z","outcome":"UPSERT_KNOWLEDGE_OUTCOME_CREATED"}', 1796593316333005, NULL);
INSERT INTO public.events VALUES (23, 'default', 'EVENT_TYPE_KNOWLEDGE_UPSERTED', '', 'cor_01a24d4e71f819b6425c20b1', '{"id":"kn_01a24d4e723cca5a4760bdf4","category":"KNOWLEDGE_CATEGORY_CONVENTION","key":"migrations.tool","value":"sqitch","source":"README","confidence":0.7,"revision":"1","create_time":"2026-12-06T21:41:56.411461Z","update_time":"2026-12-06T21:41:56.411461Z","valid_from":"2026-12-06T21:41:56.411461Z","outcome":"UPSERT_KNOWLEDGE_OUTCOME_CREATED"}', 1796593316411461, NULL);
INSERT INTO public.events VALUES (24, 'default', 'EVENT_TYPE_KNOWLEDGE_UPSERTED', '', 'cor_01a24d4e726d7439ac7f091e', '{"id":"kn_01a24d4e71ed1cd5d18f4486","category":"KNOWLEDGE_CATEGORY_ARCHITECTURE","key":"billing.database","value":"PostgreSQL 16.4","source":"ops","confidence":0.95,"revision":"2","create_time":"2026-12-06T21:41:56.333005Z","update_time":"2026-12-06T21:41:56.482055Z","valid_from":"2026-12-06T21:41:56.482055Z","outcome":"UPSERT_KNOWLEDGE_OUTCOME_REPLACED"}', 1796593316482055, NULL);
INSERT INTO public.events VALUES (25, 'default', 'EVENT_TYPE_EPISODE_RECORDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e72e945cbd24eb1b6', '{"id":"epi_01a24d4e735e61b28935ec11","task_id":"tsk_01a24d4e70c78530a4f94f7c","agent_id":"fixture-agent","action":"EPISODE_ACTION_FAILED","approach":"load with COPY","outcome":"pool exhausted","duration":"90.000000s","create_time":"2026-12-06T21:41:56.602784Z"}', 1796593316602784, NULL);
INSERT INTO public.events VALUES (26, 'default', 'EVENT_TYPE_ARTIFACT_REGISTERED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e738cfb39ccccf797', '{"id":"art_01a24d4e739931f5d70f1575","task_id":"tsk_01a24d4e70c78530a4f94f7c","agent_id":"fixture-agent","type":"ARTIFACT_TYPE_FILE","path":"out/schema.sql","description":"converted schema","size_bytes":"35","sha256":"15cac47d6cfc733bc8e5e448a5b1e74a2af7ba78fa0b8b093c885181d38de5fe","create_time":"2026-12-06T21:41:56.760577Z"}', 1796593316760577, NULL);
INSERT INTO public.events VALUES (27, 'default', 'EVENT_TYPE_PATTERN_RECORDED', '', 'cor_01a24d4e73cffe183d9485e3', '{"id":"pat_01a24d4e73da68f16f04924d","pattern_type":"retry","pattern_key":"pgloader","data":{"attempts":3.0},"frequency":"1","create_time":"2026-12-06T21:41:56.826649Z","last_seen_time":"2026-12-06T21:41:56.826649Z"}', 1796593316826649, NULL);
INSERT INTO public.events VALUES (28, 'default', 'EVENT_TYPE_STATE_ITEMS_UPSERTED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e73f4b632bba0e254', '{"extracted":3,"inserted":3,"merged":0,"superseded":0,"conflicted":0,"dropped":0,"duration_ms":1431.495,"skipped_reason":"","messages_read":0,"embedding_model":"all-MiniLM-L6-v2-int8","results":[{"uid":"c_adecdda99cb8","text":"No downtime during business hours","outcome":"inserted","target_uid":"","similarity":0.0,"reason":"no_match"},{"uid":"q_b720156e6a4b","text":"Who signs off the cutover?","outcome":"inserted","target_uid":"","similarity":0.0,"reason":"no_match"},{"uid":"r_5a43ab288909","text":"Invoice totals could round differently","outcome":"inserted","target_uid":"","similarity":0.0,"reason":"no_match"}],"thread_id":"tsk_01a24d4e70c78530a4f94f7c"}', 1796593318345470, NULL);
INSERT INTO public.events VALUES (29, 'default', 'EVENT_TYPE_MEMORY_ENTRY_ADDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e79df9c4e86ca9fd1', '{"id":"mem_01a24d4e79f61677d4736aee","task_id":"tsk_01a24d4e70c78530a4f94f7c","type":"MEMORY_TYPE_DECISION","summary":"Target PostgreSQL 16","detail":"15 is out of support by the cutover","source":"state","create_time":"2026-12-06T21:41:58.389862Z"}', 1796593318389862, NULL);
INSERT INTO public.events VALUES (30, 'default', 'EVENT_TYPE_TASK_STATE_DECISION_ADDED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e79df9c4e86ca9fd1', '{"uid":"d_ebeb578d5b06","thread_id":"tsk_01a24d4e70c78530a4f94f7c","type":"STATE_ITEM_TYPE_DECISION","text":"Target PostgreSQL 16","status":"STATE_ITEM_STATUS_ACTIVE","confidence":"STATE_ITEM_CONFIDENCE_HIGH","source":"STATE_ITEM_SOURCE_AGENT","create_time":"2026-12-06T21:41:58.380585Z","last_seen_time":"2026-12-06T21:41:58.380585Z","update_time":"2026-12-06T21:41:58.389862Z","valid_from":"2026-12-06T21:41:58.380585Z","memory_entry_id":"mem_01a24d4e79f61677d4736aee","subtask_id":"","outcome":"inserted","target_uid":""}', 1796593318389862, NULL);
INSERT INTO public.events VALUES (31, 'default', 'EVENT_TYPE_WAIT_CREATED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7a17b89cd36b17a2', '{"id":"wai_01a24d4e7a18d63333ecf9c3","task_id":"tsk_01a24d4e70c78530a4f94f7c","criteria":"the change window opens","status":"WAIT_STATUS_WAITING","create_time":"2026-12-06T21:41:58.424216Z","target":{"external":{"resolver":"change manager"}}}', 1796593318424216, NULL);
INSERT INTO public.events VALUES (32, 'default', 'EVENT_TYPE_MESSAGE_POSTED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7a17b89cd36b17a2', '{"id":"msg_01a24d4e7a1aea5e4f62253f","task_id":"tsk_01a24d4e70c78530a4f94f7c","thread_id":"tsk_01a24d4e70c78530a4f94f7c","role":"MESSAGE_ROLE_SYSTEM","kind":"MESSAGE_KIND_WAIT","content":"[Wait started] the change window opens","create_time":"2026-12-06T21:41:58.424216Z"}', 1796593318424216, NULL);
INSERT INTO public.events VALUES (33, 'default', 'EVENT_TYPE_TASK_UPDATED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7a17b89cd36b17a2', '{"id":"tsk_01a24d4e70c78530a4f94f7c","namespace":"default","name":"Migrate the billing database","goal":"Move billing from MySQL to PostgreSQL without downtime","status":"TASK_STATUS_PENDING","workspace":"/srv/billing","context":{"owner":"dana","ticket":"OPS-118"},"metadata":{"team":"payments","active_wait_ids":["wai_01a24d4e7a18d63333ecf9c3"],"last_wait_state":"watching","last_wait_event_at":1796593318.424216},"approval_mode":"APPROVAL_MODE_AUTO","plan_version":2,"etag":"W/\"16\"","create_time":"2026-12-06T21:41:56.039754Z","plan_generate_time":"2026-12-06T21:41:56.039754Z","update_time":"2026-12-06T21:41:58.424216Z"}', 1796593318424216, NULL);
INSERT INTO public.events VALUES (34, 'default', 'EVENT_TYPE_WAIT_CREATED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7a33790b2969b749', '{"id":"wai_01a24d4e7a3586d54e624bf3","task_id":"tsk_01a24d4e70c78530a4f94f7c","criteria":"staging settles","status":"WAIT_STATUS_WAITING","create_time":"2026-12-06T21:41:58.453359Z","target":{"timer":{"duration":"1.000000s"}}}', 1796593318453359, NULL);
INSERT INTO public.events VALUES (36, 'default', 'EVENT_TYPE_TASK_UPDATED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7a33790b2969b749', '{"id":"tsk_01a24d4e70c78530a4f94f7c","namespace":"default","name":"Migrate the billing database","goal":"Move billing from MySQL to PostgreSQL without downtime","status":"TASK_STATUS_PENDING","workspace":"/srv/billing","context":{"owner":"dana","ticket":"OPS-118"},"metadata":{"team":"payments","active_wait_ids":["wai_01a24d4e7a18d63333ecf9c3","wai_01a24d4e7a3586d54e624bf3"],"last_wait_state":"watching","last_wait_event_at":1796593318.453359},"approval_mode":"APPROVAL_MODE_AUTO","plan_version":2,"etag":"W/\"17\"","create_time":"2026-12-06T21:41:56.039754Z","plan_generate_time":"2026-12-06T21:41:56.039754Z","update_time":"2026-12-06T21:41:58.453359Z"}', 1796593318453359, NULL);
INSERT INTO public.events VALUES (37, 'default', 'EVENT_TYPE_WAIT_RESOLVED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7a33790b2969b749', '{"id":"wai_01a24d4e7a3586d54e624bf3","task_id":"tsk_01a24d4e70c78530a4f94f7c","criteria":"staging settles","status":"WAIT_STATUS_RESOLVED","result":"1s elapsed","create_time":"2026-12-06T21:41:58.453359Z","end_time":"2026-12-06T21:41:59.454457Z","target":{"timer":{"duration":"1.000000s"}}}', 1796593319454457, NULL);
INSERT INTO public.events VALUES (38, 'default', 'EVENT_TYPE_MESSAGE_POSTED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7a33790b2969b749', '{"id":"msg_01a24d4e7e1f7282670443ce","task_id":"tsk_01a24d4e70c78530a4f94f7c","thread_id":"tsk_01a24d4e70c78530a4f94f7c","role":"MESSAGE_ROLE_SYSTEM","kind":"MESSAGE_KIND_WAIT","content":"[Wait resolved] staging settles \u2192 1s elapsed","create_time":"2026-12-06T21:41:59.454457Z"}', 1796593319454457, NULL);
INSERT INTO public.events VALUES (39, 'default', 'EVENT_TYPE_TASK_UPDATED', 'tsk_01a24d4e70c78530a4f94f7c', 'cor_01a24d4e7a33790b2969b749', '{"id":"tsk_01a24d4e70c78530a4f94f7c","namespace":"default","name":"Migrate the billing database","goal":"Move billing from MySQL to PostgreSQL without downtime","status":"TASK_STATUS_PENDING","workspace":"/srv/billing","context":{"owner":"dana","ticket":"OPS-118"},"metadata":{"team":"payments","active_wait_ids":["wai_01a24d4e7a18d63333ecf9c3"],"last_wait_state":"resolved","last_wait_event_at":1796593319.454457},"approval_mode":"APPROVAL_MODE_AUTO","plan_version":2,"etag":"W/\"18\"","create_time":"2026-12-06T21:41:56.039754Z","plan_generate_time":"2026-12-06T21:41:56.039754Z","update_time":"2026-12-06T21:41:59.454457Z"}', 1796593319454457, NULL);


--
-- Data for Name: knowledge; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.knowledge VALUES ('default', 'kn_01a24d4e723cca5a4760bdf4', 'KNOWLEDGE_CATEGORY_CONVENTION', 'migrations.tool', 'sqitch', 'README', 0.7, 1, 1796593316411461, 1796593316411461, 1796593316411461);
INSERT INTO public.knowledge VALUES ('default', 'kn_01a24d4e71ed1cd5d18f4486', 'KNOWLEDGE_CATEGORY_ARCHITECTURE', 'billing.database', 'PostgreSQL 16.4', 'ops', 0.95, 2, 1796593316333005, 1796593316482055, 1796593316482055);


--
-- Data for Name: knowledge_history; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.knowledge_history VALUES (1, 'default', 'kn_01a24d4e71ed1cd5d18f4486', 'PostgreSQL 16', 'decision', 0.9, 'KNOWLEDGE_VALUE_OUTCOME_REPLACED', 1796593316333005, 1796593316482055);


--
-- Data for Name: learned_patterns; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.learned_patterns VALUES ('default', 'pat_01a24d4e73da68f16f04924d', 'retry', 'pgloader', '{"attempts":3.0}', 1, 1796593316826649, 1796593316826649);


--
-- Data for Name: leases; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: memory_embedding_model; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memory_embedding_model VALUES (1, 'all-MiniLM-L6-v2-int8', 384, 1796593313809025);


--
-- Data for Name: memory_embedding_queue; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: memory_embeddings; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memory_embeddings VALUES (1, '[-0.017945694,-0.04935897,-0.019409306,0.013707952,-0.025444262,-0.06854798,0.0030058546,-0.029476812,-0.033562895,-0.015751954,0.031339724,-0.003470739,0.0009173933,0.01655056,0.059828654,0.05431536,0.0013870473,-0.10087581,-0.03435117,0.038093656,-0.06324643,-0.062985994,-0.09626512,-0.0007237252,0.015115227,0.0614421,-0.05742478,-0.05145784,0.013021478,-0.049866684,-0.06384269,0.035286665,-0.08373446,-0.03092359,0.1304886,0.041618884,-0.024792152,-0.010862709,-0.022080239,-0.030183151,0.06175855,0.0038935856,-0.030365564,0.07892812,0.043900672,0.028723836,-0.015501311,-0.039030187,0.1224957,0.009029771,-0.024715004,0.046008203,0.018458897,-0.048778012,0.018210758,-0.014237367,0.022237236,0.03612112,-0.010927947,0.017655097,-0.01861955,-0.004623351,0.007664381,0.017427064,0.024066245,-0.01638704,0.019627089,-0.0014522406,-0.014095846,0.011551831,0.004529104,0.09958602,-0.13287309,0.0015731227,0.04782002,0.06000215,0.052972283,-0.047983322,0.07140433,-0.039449275,-0.026294531,-0.035044946,-0.011720319,-0.059359338,0.012777547,-0.02046038,-0.027488025,-0.06171182,-0.071039274,0.043256734,-8.107347e-06,0.030338973,-0.044771332,0.0552962,0.025659202,0.042143885,-0.045603197,0.0058060703,-0.050066926,0.04986323,0.016805891,0.026035618,0.10521389,0.09990541,-0.029097095,-0.021626279,-0.019390572,0.080296576,-0.015048738,-0.06753133,0.0056141387,0.0056357277,0.088925324,-0.056090396,-0.0038791916,0.06189825,-0.09491022,0.0047938908,-0.046058636,0.08405198,-0.01972308,-0.02488814,-0.083774805,-0.03794228,-0.074223824,0.060878653,0.06619948,-1.7123705e-33,0.024519613,-0.10032032,0.020059073,0.04731943,0.020834772,-0.0057049026,0.005653283,-0.006805563,-0.06461606,-0.05527534,-0.078767896,-0.048706256,-0.04175083,-0.010877995,-0.028997574,-0.06627242,0.07324889,0.09166386,0.045719884,0.06925111,0.009054203,-0.07338867,0.00955107,-0.04321351,-0.013980911,0.060807727,-0.010214365,0.050667785,0.023806842,0.041310947,0.032018553,-0.02095913,0.006344502,0.025413819,-0.039841484,-0.03349995,0.021665914,-0.021777127,-0.03768947,0.030469982,-0.023158655,0.0148513885,-0.0055222604,0.03988631,-0.08533037,-0.032014895,-0.013945879,0.044303697,-0.034633975,0.083725356,-0.049109567,-0.0028138177,-0.017919157,0.019921781,-0.014898885,0.010968233,-0.035683263,0.035310823,-0.02976714,0.06297264,0.034502875,0.059924416,-0.08968239,0.02833944,0.12341649,0.018122485,0.009540737,0.030693015,-0.032670144,0.005033224,-0.051655326,0.021452688,0.014558411,-0.029310914,0.045367897,-0.10042903,-0.014757065,-0.020593185,-0.048801884,0.040109586,0.017615192,0.0033534481,0.043167625,-0.006651617,-0.07148759,0.07695499,0.035432108,-0.034799546,-0.016422037,0.024053797,0.008702465,0.03226367,0.083107375,-0.065772474,-0.0031334287,1.5074523e-33,-0.026636498,-0.054789096,-0.013617724,-0.040869214,0.097090326,0.010166335,0.0033686615,0.048353467,-0.10198696,0.0014056979,0.10747246,0.030585954,-0.014189518,-0.019541606,-0.013027044,-0.017744882,-0.010253415,0.016506106,0.044095304,0.10900822,0.057009544,0.048887774,-0.0033696725,0.0016600115,-0.035170414,0.015492716,-0.10028329,-0.0060169874,0.017758317,0.0733007,0.07348237,0.028571943,-0.052838225,0.10033539,-0.013620834,0.06399286,0.05485797,0.09187858,0.049874656,-0.092461824,0.042387556,0.02223169,-0.056627985,-0.002009119,0.058697473,-0.024075042,-0.011518885,-0.12445834,-0.05220601,0.075017944,-0.08049257,-0.035699606,0.017732995,0.08189915,-0.029206453,-0.01388557,0.038041964,0.010615157,-0.02543482,-0.072096966,0.030729812,0.0046557286,-0.06871972,-0.046901885,0.09308933,0.029895533,0.044262137,0.0153998155,0.02744362,-0.037535224,-0.04186731,0.09318933,0.015333763,0.04848708,-0.00061873684,0.021599405,-0.1436646,0.030240225,-0.011431065,0.098758645,-0.043833166,0.086306795,-0.054301452,-0.008315643,0.056129493,0.026499161,0.045583885,0.037546515,0.024595503,0.013522958,-0.06396488,-0.0753418,0.002630094,0.1578033,-0.033500686,-1.6983243e-08,0.02250681,0.01631804,-0.06916005,-0.01490521,0.13404453,0.008204901,-0.019708315,0.08914315,-0.025250794,0.06644642,-0.08446487,0.019392744,-0.03867399,0.037542168,0.03830524,-0.038278166,-0.0047901073,-0.029974882,0.00088108354,-0.074673146,0.027611509,-0.0206097,-0.050641254,0.08215444,0.043340005,-0.015827227,0.059519097,0.013724242,-0.021340808,-0.07706872,-0.07381149,-0.077639796,-0.06544562,-0.03814416,-0.059694566,0.029179202,-0.031465884,0.026486104,-0.009716001,0.00025377353,-0.049317818,0.059695996,0.09935413,-4.2512373e-05,0.13257661,0.019217955,-0.1253645,0.103583395,-0.017740114,-0.048953034,-0.062696844,-0.013728891,-0.06312752,0.03752861,0.009608924,-0.028623987,-0.028971048,0.043711826,-0.06397574,0.021105949,0.005099373,0.014052547,-0.059486058,-0.083701216]');
INSERT INTO public.memory_embeddings VALUES (2, '[-0.027441738,0.0012527833,-0.04367595,-0.04049159,-0.030230781,-0.0044157645,-0.084249355,-0.0019075538,-0.05551199,-0.03038483,-0.06481891,0.032474104,-0.04304262,-0.01962263,0.014934448,0.026235318,0.13116418,-0.04092887,0.037455194,-0.08694533,-0.11797969,-0.08051575,-0.05174134,-9.713987e-05,-0.0010079355,-0.03009046,-0.053228114,0.04636999,-0.043973766,-0.08600161,-0.049020734,0.025332917,0.045965414,0.039356668,-0.030758923,-0.03546577,0.073211044,-0.13549493,-0.029081425,-0.056354087,0.0420914,0.013838636,-0.11098454,0.066263914,-0.009801314,-0.08883148,-0.0387944,-0.010719122,0.02043514,-0.0023159625,-0.0533023,-0.06555778,-0.004052377,-0.034444235,-0.010018962,0.026191028,-0.05746685,-0.011539751,-0.016428564,-0.010640189,-0.06575452,-0.026072143,-0.025684416,0.08653402,-0.036588743,-0.004794329,0.07100097,-0.026206356,0.03695301,-0.10425309,-0.0042513474,0.0025978973,-0.059320096,-0.016745228,-0.06976116,0.051371973,0.0140383085,-0.06636895,0.03067059,-0.014310323,-0.030405961,-0.00916027,-0.09023034,0.043190885,-0.04626765,-0.03010465,-0.0075433548,-0.028445361,0.028782642,8.200138e-05,0.018948525,-0.009550219,0.06575835,0.065833025,0.004848921,0.035122592,0.060368594,-0.07067172,0.072560005,-0.037652977,0.0143446615,0.08534184,0.0513252,0.044428967,-0.0973417,-0.0031847395,0.013586878,0.014861872,-0.00010010167,-0.014354121,0.057739284,-0.015488711,0.00023961191,-0.05969518,0.056095194,-0.054052606,-0.103327386,-0.043835253,0.068464674,-0.040671706,-0.002788547,0.02498223,-0.065093525,-0.025790641,-0.032360677,0.0037214188,-0.051725134,-2.6910324e-34,0.025424693,0.05209761,0.13050166,-0.02642092,0.041436322,-0.023991654,-0.011097995,0.09079325,-0.09951064,0.004639024,-0.040391162,-0.027010636,-0.06706666,0.0058436384,0.12048479,-0.025388991,-0.016507708,0.091182955,0.0670842,0.014612602,0.009885389,0.09251768,-0.050860234,0.045181613,0.06295431,0.052750833,-0.0332426,-0.034947146,0.0575517,0.026599497,-0.028020516,0.006276553,-0.077554576,0.057746165,-0.010059599,0.013837851,-0.10900647,-0.07694979,-0.03792602,0.00048503702,0.04399317,0.06962514,-0.036183733,-0.07649834,0.06376725,0.061335407,-0.022984317,-0.0363772,0.053942155,0.005056499,-0.016910061,0.057306133,0.010573425,0.08703055,0.040137522,-0.0022549452,0.022588084,-0.04627619,0.042199958,0.08214624,-0.040748782,0.0015593374,-0.032005213,-0.020583913,0.04554545,-0.01831404,0.017702326,-0.009707409,-0.007335117,0.08467922,-0.04960181,0.015451565,0.0146905435,0.04618708,0.09372871,-0.03906414,-0.07152808,0.013834049,0.033525426,-0.039539766,-0.0035715813,0.0088283,-0.108273394,0.002599096,-0.024693511,-0.0024367876,0.034842167,0.04705935,-0.029644564,0.06218735,-0.056602754,0.02200923,0.10287073,0.10741447,-0.01383828,-3.617376e-33,-0.042462677,-0.10818836,0.021181792,0.06366947,0.021858616,-0.01638055,0.07462358,-0.038196713,0.0524735,0.04369432,0.029392768,-0.026372062,0.12048784,-0.0047010425,-0.028512627,0.046745252,-0.039022427,-0.09021437,-0.1300867,0.019974422,-0.020040214,0.10206285,-0.0529261,0.08448611,0.124889195,-0.075749524,-0.029016262,-0.06671019,-0.09164967,0.018184576,0.018849213,0.018967122,-0.004505162,-0.022769386,-0.075777866,0.011093241,0.013617966,-0.0042212047,0.031388834,0.026828587,0.015058425,0.0032504748,0.051288657,0.05099876,-0.02597839,0.110988714,-0.013756885,-0.01980738,0.016208695,0.00255834,-0.06492473,0.037445366,-0.018031092,-0.08590617,0.04029126,-0.028535413,0.0018533487,-0.0022806947,-0.058693655,-0.004853638,0.0021597266,0.019462932,0.04829516,-0.011582291,0.00522367,-0.020417878,0.03728267,0.048932154,-0.08469071,-0.073729746,-0.019530145,0.008077279,0.034154445,0.09133205,-0.047677312,-0.043939173,0.022010561,0.014659338,-0.004317883,0.019655803,0.020373553,0.03333397,0.04421358,0.035572536,0.04636513,-0.04362442,-0.019735562,-0.08888954,-0.016863631,0.062454242,-0.036030833,-0.024556482,-0.054468293,0.0053724563,-0.020793296,-1.8960323e-08,0.02541031,0.01837572,0.013068254,0.056295745,0.046560902,0.014523437,0.0219398,0.111793675,0.074039795,0.042716753,0.04232667,-0.03731577,-0.017887505,0.088180535,0.012149193,-0.05840084,0.011528244,-0.03446993,-0.005441762,-0.027805304,-0.02875307,0.054905456,-0.04264289,-0.047838774,0.0031987496,-0.03905973,-0.021761276,0.0070238328,0.04805731,-0.017674476,0.015130796,-0.022601305,0.013039382,-0.01872036,0.07057766,-0.030637745,0.026645912,0.10497873,0.01473345,-0.013333866,0.018133782,0.010861109,-0.009177223,-0.03491779,-0.0078056953,0.018529339,-0.11181107,-0.034710452,-0.017218407,0.08088329,-0.010613534,-0.047545042,0.07631208,0.085567705,0.16312633,0.0126143815,-0.03910493,-0.041341327,-0.024806699,-0.05989001,0.10531712,-0.06807436,0.039240282,0.04484966]');
INSERT INTO public.memory_embeddings VALUES (3, '[-0.03605443,0.030373085,0.035636935,-0.010986582,-0.10177119,-0.14734057,-0.12702546,0.0050972803,0.0028195446,0.015600618,0.0043784487,-0.052667588,-0.011755708,0.00918535,-0.011148816,-0.04178368,0.041008227,-0.08019842,0.0041109268,0.05291379,-0.111165754,0.0650504,-0.058191273,0.004455836,0.06834382,-0.017137734,-0.073949836,-0.033269756,-0.027959669,-0.043527853,0.07621443,-0.009700913,-0.12175657,0.023354208,0.14175196,0.032624647,0.07076907,0.011019752,0.0855061,-0.008147706,0.08742508,-0.036852382,-0.00049243023,-0.05717959,0.04140444,-0.05602492,0.0048237,0.026693294,0.028309077,0.03509665,-0.026974179,0.0009178495,0.092806496,0.031592753,-0.017475044,0.017951136,0.03697431,0.043967422,-0.01428276,-0.02263915,-0.017173517,0.036016673,-0.013285648,-0.004322316,-0.08806286,0.068278275,0.033952896,0.0009937274,-0.1179297,0.004111341,0.00974784,0.030194296,-0.11078497,0.07427347,0.105270416,0.022376746,0.04092771,-0.075073116,0.012350847,-0.0628056,0.018122906,-0.046389263,-0.09082673,0.013012658,0.05066027,0.019755598,0.097070694,0.025285203,-0.05412146,-0.020245973,0.07717032,0.015682083,-0.008849603,-0.06085634,0.11401814,-0.0016824,0.046343427,-0.024516895,0.060200043,0.021046147,0.032493006,-0.042054642,0.028500417,0.048279017,-0.05422447,-0.007604769,0.05407567,-0.066804744,0.048714563,-0.017446036,-0.012055604,-0.07553258,0.048822768,-0.016846595,-0.05043175,0.0003205521,-0.014787195,-0.010691588,-0.023615522,-0.000101133075,-0.0142785795,0.09356611,-0.04583321,0.027138242,0.028467769,0.10329342,0.10836645,-1.5650047e-33,-0.10532631,-0.08259733,0.07922901,0.02899839,0.031041007,-0.0025299506,0.059594158,0.061588477,-0.0016674781,-0.07183917,-0.038841877,0.025426695,-0.054322615,-0.03426635,-0.08009773,0.10841307,0.00056796666,0.079094194,-0.020583099,0.063411236,-0.01531271,-0.11160464,0.039623667,0.016495053,-0.029906541,0.02156458,0.047815822,0.033549353,0.05333511,0.010377248,0.027671585,0.030191226,0.016588021,0.07486267,-0.03955705,-0.0040049544,-0.02669986,0.013413423,-0.036008693,0.009288399,-0.11321157,0.041032203,0.025894597,-0.01054466,-0.026967531,-0.033849683,0.03270158,-0.0016425941,0.11193742,0.05519793,-0.012494467,0.03965623,-0.05327702,-0.03689979,-0.01573559,-0.0075274105,0.04086673,-0.040818185,-0.028418131,-0.045314237,0.00637923,0.008729048,-0.0556755,0.044330016,-0.00851292,-0.010701689,-0.020959418,0.003705891,0.023695095,-0.01002775,0.022934701,-0.05358879,-0.045608625,-0.079343945,0.047423232,-0.07648357,-0.056241542,0.030506454,0.02116203,-0.061147064,0.049053382,-0.09802493,0.08137138,-0.010685797,0.022782462,0.05660037,-0.0035121066,0.006056821,-0.025844416,-0.040853214,0.008638064,0.05048159,0.00859983,0.023317147,0.12162043,-4.138629e-34,0.00074531237,-0.009437197,0.024684167,0.031002577,0.022166219,0.032161847,0.010604971,0.042255435,-0.0010487533,0.040927276,0.080466814,-0.009547553,-0.093406744,0.014733436,-0.022689499,-0.035921298,0.048925184,-0.003943392,0.09222934,0.020464472,0.074713804,0.052903246,0.053142853,0.0399667,-0.11365027,0.019775348,-0.0365068,-0.034234334,0.023932332,-0.0033068417,0.003978119,0.05914985,-0.0828438,0.061293032,0.028170321,-0.006576003,-0.02937575,0.028888665,-0.017746208,-0.026296906,-0.00048751396,0.07626343,0.032255378,-0.050467078,-0.0049822954,-0.06692037,0.012216198,-0.051976006,-0.029616095,0.04552273,-0.066298425,0.037370693,0.04852583,0.034283493,-0.048670836,0.092333235,0.025066651,-0.0070275194,-0.08369678,-0.010557485,-0.07141818,0.035025634,0.044273805,0.03739937,0.019213336,0.06968422,0.057734948,-0.033358306,0.095135614,0.00766398,0.008710795,-0.022829393,-0.0064046257,-0.09129414,0.046446085,0.023053147,-0.07999601,-0.09825078,0.005199092,0.00031450795,-0.07536478,-0.019106021,-0.026075022,0.03313689,-0.08384895,0.0064463774,-0.027780656,0.024332598,0.016294003,0.07006997,-0.011675876,0.058381457,0.00503887,0.029732281,0.034363274,-1.7816037e-08,-0.030031126,-0.024534632,-0.13324901,0.02925699,-0.027777273,-0.12118851,-0.067843266,-0.00037266544,-0.0161421,0.051332057,0.0032435274,-0.020731179,-0.015311094,-0.009044688,-0.011429462,-0.098942496,-0.04656342,-0.03628625,-0.04468884,-0.06712306,0.0018812352,0.030165698,-0.012881467,-0.062101368,-0.02850252,0.018784434,-0.0053810435,0.066722415,0.011182194,-0.011605288,-0.06564736,0.023115013,-0.04385525,-0.053966407,-0.04722834,0.01340032,0.06415832,0.032076728,0.024695402,-0.07386446,0.046473313,0.04218346,0.01258785,-0.05867602,0.041682933,-0.021707455,-0.07595827,0.06618551,0.06803539,-0.03346496,-0.052021217,0.03313411,-0.07672666,0.04374987,0.05643562,-0.08647252,-0.001146911,-0.05142977,0.013254269,0.010096301,0.12010985,-0.05453427,-0.036328115,-0.04611808]');
INSERT INTO public.memory_embeddings VALUES (4, '[-0.03659997,-0.04807277,-0.02772739,-0.0029017446,-0.0051326724,-0.032955103,-0.100683086,-0.0040395306,-0.0014943457,-0.04632619,0.020743676,-0.022507323,0.044692934,0.0077741337,0.069167554,0.02646726,-0.12246972,0.02990644,0.049726065,-0.07029242,0.06595333,-0.0055632982,0.03606306,-0.018007575,0.016887147,-0.016287386,-0.034010783,-0.018207451,0.0012065339,-0.042328928,0.124771915,0.03247133,-0.0008163442,-0.02572268,0.100315526,0.0060290666,-0.0009527166,0.050537318,0.02582286,-0.0039335582,0.07276038,-0.07024743,-0.031102572,-0.02184956,-0.021984592,0.029247262,-0.089635186,-0.05501612,0.081460595,0.028041499,0.05008258,-0.09228639,0.017969202,0.03832302,-0.068396844,-0.04389587,-0.03414382,0.07386435,0.015016657,0.0028210608,0.08293644,0.057840776,-0.02378344,-0.016247047,0.009432752,0.03802264,-0.061371695,-0.08131495,-0.0008313811,0.05888572,0.029268188,0.018173356,0.06606729,-0.0015258212,0.013741534,0.027940722,0.016312158,-0.0010113489,0.033065196,-0.037752748,-0.027724057,-0.05056512,0.05486022,0.019834816,-0.0018070048,0.025532976,-0.009478337,-0.029558692,-0.016616868,0.05493724,0.105944596,-0.06052298,0.015189378,0.06586393,-0.053633116,0.0057458286,0.0052877096,-0.01848248,0.09500894,0.013198936,0.013388778,-0.027274974,-0.066291474,0.0005227236,0.08359599,0.04717257,-0.032083645,0.029655926,0.007437909,-0.020774588,0.020141441,-0.10258041,0.024440186,-0.009980846,-0.08280123,0.18574333,-0.027132453,0.07663709,0.08533002,-0.052837167,0.043297,0.01382172,0.028580666,-0.075144626,-0.0110845845,-0.028320668,0.100322776,1.9444396e-33,-0.03070449,-0.01613387,-0.06212646,0.017335938,0.024019642,0.048554856,0.018655954,0.05506882,-0.06024788,-0.05026673,0.011499084,0.12755181,-0.06788029,-0.065215714,-0.04102441,-0.08439693,-0.016205944,0.027523765,0.03303582,0.020647896,0.0856061,-0.04136397,0.030036256,0.077575296,0.0020375524,0.058845315,0.046217285,0.05964799,0.0040875226,0.0039562215,-0.0023755813,0.04358817,0.015859416,0.04722182,0.011017373,0.11238567,0.09713111,-0.010067671,-0.093573056,0.054505643,-0.016648104,-0.009811113,0.025342295,-0.044067293,0.029023606,-0.058470875,-0.042502444,-0.054302454,0.10288963,-0.007982579,-0.011868747,0.047527943,-0.039960723,-0.04290584,-0.0041568987,-0.12216812,-0.0442104,0.033242952,-0.034665123,-0.1662409,-0.034250397,-0.03794252,-0.033631068,-0.01301976,0.06607492,0.037488848,0.021513645,0.061156917,-0.06772231,0.04154208,-0.03263986,0.008705225,0.044447143,-0.061638407,0.020132981,0.008032215,-0.023990745,0.051123556,-0.006863889,-0.036395553,0.03364693,-0.0078820605,0.0017518065,0.04587773,0.07665397,0.048195597,-0.050755177,0.09459057,-0.015247666,-0.020423256,-0.029012477,0.061798923,0.009878001,0.08092422,-0.036951818,-3.3746367e-34,-0.028618205,0.057929784,0.0566845,0.091561034,0.015339642,-0.026111323,-0.03229696,0.11606335,-0.025973158,0.0087404335,0.030393502,-0.06526802,0.083788045,0.0007697757,0.027461953,-0.018463027,-0.0844485,0.03240455,-0.024061093,-0.0012658515,0.07687752,0.085124,-0.09275937,0.026908536,0.05231576,0.058567148,-0.093901105,-0.015923522,0.02680872,0.03136159,-0.0074470527,-0.0347083,0.0630346,0.09743991,0.035860933,-0.07847762,0.05011556,0.0054931226,0.034810454,0.037507426,-0.011619422,-0.0065333494,-0.032456916,-0.015841944,0.08397317,-0.002548721,0.110569134,0.01791498,0.06292568,0.037177894,-0.048894968,-0.025376728,-0.06616285,-0.051009934,-0.021422133,-0.010904768,0.008663562,0.060030993,0.052432716,-0.013988922,0.028907014,0.0060710027,0.01162358,0.02294918,0.041474357,0.076989,-0.024293123,0.045567043,0.003199821,-0.049945593,0.03659384,-0.018354176,-0.052943733,-0.07976981,0.039676435,-0.03148777,-0.05254229,-0.03111346,-0.04249872,0.036316793,-0.05251057,-0.02707568,0.030732647,0.028007437,0.027424803,0.040347688,0.010651145,-0.038646508,0.005171812,0.021324571,-0.020692728,0.07111307,0.008713105,0.027617034,0.015923101,-1.3784918e-08,0.066848144,0.06794551,-0.1283287,-0.0013755441,0.1132861,-0.05455208,-0.02196963,0.0011353026,-0.064575516,-0.06871852,-0.0027849488,-0.04574518,-0.058235824,-0.024489816,0.0525439,0.0046082037,-0.02742254,-0.043236647,0.0051540183,-0.033001166,0.041110445,-0.05734165,0.03939252,0.023611575,-0.11169139,0.04521322,-0.00641816,0.09209747,-0.0059078215,-0.0018987164,-0.083827846,-0.024620717,0.035497226,-0.011174596,0.003455025,-0.016354999,-0.09905679,-0.053544883,-0.0036330034,0.11135174,0.026680274,0.041164976,-0.012522339,0.034276985,-0.04531389,-0.013349806,-0.063899666,-0.05541849,-0.042116195,-0.031208236,-0.07012354,-0.08298135,-0.01951557,0.026025701,-0.08942096,0.023413239,-0.010933182,0.011449566,-0.066079885,-0.05538718,0.0021624244,-0.08262419,0.081869766,-0.05669975]');
INSERT INTO public.memory_embeddings VALUES (5, '[0.07074946,-0.012667823,-0.04288129,-0.064940766,0.0055332794,0.018578239,-0.0021584863,-0.035235472,-0.065954655,-0.036327656,-0.00019201191,0.0058835987,-0.0021313739,-0.05165004,0.006468868,0.03587398,0.10976747,0.023289198,0.02218788,-0.03174516,-0.10947954,-0.103798755,-0.08036712,0.014151966,-0.050081223,-0.097584546,-0.054381385,0.024654439,-0.083786115,-0.046097625,-0.03278226,-0.004540699,0.0563453,0.06140617,-0.0041168905,-0.02105709,0.060273957,-0.084693916,0.00512405,-0.023221279,0.07108214,0.049562518,-0.07963071,0.038286656,-0.035564378,-0.09173789,-0.03929236,0.08015441,0.01785359,-0.021649532,-0.035416134,-0.011760312,-0.01914729,0.021526292,0.016549135,0.06445609,-0.049347077,0.029463515,0.036818303,0.005895448,-0.071903914,-0.050735693,-0.029249767,0.03894225,-0.031937778,-0.044321086,0.074127115,-0.021761063,0.023081217,-0.050351292,-0.0006084718,0.012252148,-0.06953085,-0.010357821,-0.012724521,0.06749296,-0.011418918,-0.022097515,0.039448515,-0.027464006,-0.047334418,-0.057866856,-0.05388225,0.01132847,-0.05919832,-0.0315688,0.00883501,-0.03562805,0.038190614,0.018956138,0.015513308,-0.046310235,0.031311065,0.02167509,0.027730444,-0.010810618,0.054785974,-0.086792186,0.034135744,-0.018270936,0.028464187,0.076284766,0.033492677,0.0664422,-0.11613509,-0.067728706,-0.031787675,0.025810516,-0.042080715,0.010035894,0.050042845,-0.018152172,0.032407086,-0.060673863,0.07201518,-0.039549753,-0.09817512,-0.057307232,0.0067725107,-0.09364842,0.039813746,-0.015846675,-0.0037599143,-0.015732566,-0.073109575,-0.023416871,-0.035861097,8.417885e-34,0.047495123,0.052817132,0.08010044,-0.06442791,-0.009400927,-0.067682736,0.03553846,0.09061191,-0.05819074,0.02932744,-0.040310346,-0.07135607,-0.026523253,0.00042099413,0.057572044,0.03939593,0.013607363,0.058420163,0.049414117,0.03883254,-0.016418025,0.08803002,-0.103080384,0.0151570095,0.06888732,0.059392117,-0.06997026,-0.01738362,0.05036862,0.003743593,-0.019612147,0.030361533,-0.05858684,0.024167199,0.06590261,0.0041217864,-0.06114348,-0.025023602,-0.04107694,-0.030309528,0.10538394,0.05843446,0.004082384,-0.032049887,0.086618476,0.03570285,-0.013750971,-0.08851827,0.03401492,0.00399291,-0.025777936,0.02452914,-0.03708162,0.057222456,-0.025339218,-0.06281939,-0.058421727,-0.06822709,0.0933057,0.046610106,0.0092241485,-0.06636001,-0.03376268,0.0214805,0.04828317,-0.03125186,-0.026181877,-0.0821053,0.017837664,0.09306175,-0.018877309,0.008467082,0.021339785,0.0503823,0.09460039,-0.021971209,-0.070494324,0.05539592,0.053545088,0.01475024,-0.00810503,-0.010523787,-0.095336914,0.024390114,-0.021874357,-0.022761812,0.034569453,0.029019013,-0.027190356,0.01762353,-0.0037121822,0.03647648,0.032009654,0.06449092,0.018642733,-4.4861434e-33,0.0019277675,-0.05549397,0.07928186,0.015706483,0.011630897,-0.009806948,0.05683038,-0.057051912,0.071768776,0.0705819,-0.01065993,-0.034192346,0.11398555,0.022702608,-0.04411365,0.07059556,-0.026709424,0.018105617,-0.1958457,-0.01968043,-0.048435185,0.031134844,0.0021554749,0.08601194,0.13000375,-0.07750244,0.06924743,-0.07044127,-0.111994,0.03468307,0.044283286,0.036507808,-0.024448887,0.061306957,-0.10001059,-0.030052733,0.03874502,0.0023779548,0.046936814,-0.008513311,0.026621137,0.02315177,0.07126162,0.040722653,-0.01911783,0.08504715,0.085156515,0.015829505,-0.011412278,0.0083979545,-0.04270275,0.03363274,0.012728078,-0.03965689,0.098228656,-0.026706507,-0.0004365434,0.015429663,-0.06362093,-0.07834835,-0.00162334,0.030210048,0.05836167,-0.021736523,0.04269832,-0.057694048,0.023306692,0.03887872,-0.036738988,-0.041972235,-0.07602687,0.04183636,0.06402562,0.061274793,-0.049844347,-0.051931933,0.004381125,0.049073026,-0.035727028,0.0040270537,0.05835325,-0.006929063,0.018329961,-0.01870076,0.038442157,-0.06215186,0.024656499,-0.018221049,-0.05858852,0.028137654,-0.060172267,-0.036060326,-0.04335816,-0.00072790706,-0.06813759,-1.8444497e-08,-0.0059042876,0.01413969,-0.050391484,0.005480586,0.0109912455,0.06883933,0.0061627403,0.05123413,0.048646674,0.043983124,0.04718848,-0.029695055,-0.007171362,0.07286691,-0.06356567,-0.118257135,0.014334459,-0.054474954,0.0029546404,-0.022003949,-0.04352892,0.034792457,-0.03284053,-0.024780262,0.04666349,-0.014381939,-0.013216981,0.07457457,0.050759375,-0.017496586,0.07995694,0.0028690458,-0.015391376,-0.045806423,0.06998741,-0.033224087,0.07073318,0.12525776,0.04049973,0.027476197,0.02241921,-0.028229428,-0.03811209,-0.018639943,-0.044689607,-0.05264497,-0.102608465,-0.02332064,-0.029572614,0.08240763,0.023905346,-0.017756304,0.07857916,0.03289143,0.1393406,-2.796792e-05,-0.07525243,-0.030337509,-0.023579938,-0.03585566,0.11486261,-0.02779642,0.016804619,0.03581299]');


--
-- Data for Name: memory_entries; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memory_entries VALUES (1, 'default', 'mem_01a24d4e71bcbdedca7d9623', 'tsk_01a24d4e70c78530a4f94f7c', 'convert', 'MEMORY_TYPE_ERROR', 'The connection pool was exhausted during the bulk load', 'pgbouncer pool_size 20; raised to 50', 'api', 1796593316283437, DEFAULT, DEFAULT, NULL, 0);
INSERT INTO public.memory_entries VALUES (2, 'default', 'mem_01a24d4e71c86c955fa8cac0', 'tsk_01a24d4e70c78530a4f94f7c', '', 'MEMORY_TYPE_DECISION', 'We chose PostgreSQL 16 as the target engine', '', 'api', 1796593316283437, DEFAULT, DEFAULT, NULL, 0);
INSERT INTO public.memory_entries VALUES (3, 'default', 'mem_01a24d4e71d252325b3f44ec', 'tsk_01a24d4e70c78530a4f94f7c', '', 'MEMORY_TYPE_DISCOVERY', 'The integration test for invoices fails intermittently', '', 'api', 1796593316283437, DEFAULT, DEFAULT, NULL, 1);
INSERT INTO public.memory_entries VALUES (4, 'default', 'mem_01a24d4e71d5e2adbea7b5f0', 'tsk_01a24d4e70fe6ef561323782', '', 'MEMORY_TYPE_TOOL_RESULT', 'certbot renewed 3 certificates', '', 'api', 1796593316283437, DEFAULT, DEFAULT, NULL, 0);
INSERT INTO public.memory_entries VALUES (5, 'default', 'mem_01a24d4e79f61677d4736aee', 'tsk_01a24d4e70c78530a4f94f7c', '', 'MEMORY_TYPE_DECISION', 'Target PostgreSQL 16', '15 is out of support by the cutover', 'state', 1796593318389862, DEFAULT, DEFAULT, NULL, 0);


--
-- Data for Name: memory_entry_relevance; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memory_entry_relevance VALUES ('cutover', 2);


--
-- Data for Name: memory_entry_tags; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memory_entry_tags VALUES ('pgbouncer', 1, 'default', 16);
INSERT INTO public.memory_entry_tags VALUES ('load', 1, 'default', 16);
INSERT INTO public.memory_entry_tags VALUES ('engine', 2, 'default', 8);
INSERT INTO public.memory_entry_tags VALUES ('tests', 3, 'default', 7);


--
-- Data for Name: memory_postings; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memory_postings VALUES ('default', '20', 1, 'tsk_01a24d4e70c78530a4f94f7c', 1, 16);
INSERT INTO public.memory_postings VALUES ('default', '50', 1, 'tsk_01a24d4e70c78530a4f94f7c', 1, 16);
INSERT INTO public.memory_postings VALUES ('default', 'bulk', 1, 'tsk_01a24d4e70c78530a4f94f7c', 2, 16);
INSERT INTO public.memory_postings VALUES ('default', 'connect', 1, 'tsk_01a24d4e70c78530a4f94f7c', 2, 16);
INSERT INTO public.memory_postings VALUES ('default', 'exhaust', 1, 'tsk_01a24d4e70c78530a4f94f7c', 2, 16);
INSERT INTO public.memory_postings VALUES ('default', 'load', 1, 'tsk_01a24d4e70c78530a4f94f7c', 2, 16);
INSERT INTO public.memory_postings VALUES ('default', 'pgbouncer', 1, 'tsk_01a24d4e70c78530a4f94f7c', 1, 16);
INSERT INTO public.memory_postings VALUES ('default', 'pool', 1, 'tsk_01a24d4e70c78530a4f94f7c', 3, 16);
INSERT INTO public.memory_postings VALUES ('default', 'rais', 1, 'tsk_01a24d4e70c78530a4f94f7c', 1, 16);
INSERT INTO public.memory_postings VALUES ('default', 'size', 1, 'tsk_01a24d4e70c78530a4f94f7c', 1, 16);
INSERT INTO public.memory_postings VALUES ('default', '16', 2, 'tsk_01a24d4e70c78530a4f94f7c', 2, 8);
INSERT INTO public.memory_postings VALUES ('default', 'chose', 2, 'tsk_01a24d4e70c78530a4f94f7c', 2, 8);
INSERT INTO public.memory_postings VALUES ('default', 'engin', 2, 'tsk_01a24d4e70c78530a4f94f7c', 2, 8);
INSERT INTO public.memory_postings VALUES ('default', 'postgresql', 2, 'tsk_01a24d4e70c78530a4f94f7c', 2, 8);
INSERT INTO public.memory_postings VALUES ('default', 'target', 2, 'tsk_01a24d4e70c78530a4f94f7c', 2, 8);
INSERT INTO public.memory_postings VALUES ('default', 'fail', 3, 'tsk_01a24d4e70c78530a4f94f7c', 2, 7);
INSERT INTO public.memory_postings VALUES ('default', 'integr', 3, 'tsk_01a24d4e70c78530a4f94f7c', 2, 7);
INSERT INTO public.memory_postings VALUES ('default', 'intermitt', 3, 'tsk_01a24d4e70c78530a4f94f7c', 2, 7);
INSERT INTO public.memory_postings VALUES ('default', 'invoic', 3, 'tsk_01a24d4e70c78530a4f94f7c', 2, 7);
INSERT INTO public.memory_postings VALUES ('default', 'test', 3, 'tsk_01a24d4e70c78530a4f94f7c', 2, 7);
INSERT INTO public.memory_postings VALUES ('default', '3', 4, 'tsk_01a24d4e70fe6ef561323782', 2, 4);
INSERT INTO public.memory_postings VALUES ('default', 'certbot', 4, 'tsk_01a24d4e70fe6ef561323782', 2, 4);
INSERT INTO public.memory_postings VALUES ('default', 'certif', 4, 'tsk_01a24d4e70fe6ef561323782', 2, 4);
INSERT INTO public.memory_postings VALUES ('default', 'renew', 4, 'tsk_01a24d4e70fe6ef561323782', 2, 4);
INSERT INTO public.memory_postings VALUES ('default', '15', 5, 'tsk_01a24d4e70c78530a4f94f7c', 1, 11);
INSERT INTO public.memory_postings VALUES ('default', '16', 5, 'tsk_01a24d4e70c78530a4f94f7c', 2, 11);
INSERT INTO public.memory_postings VALUES ('default', 'cutov', 5, 'tsk_01a24d4e70c78530a4f94f7c', 1, 11);
INSERT INTO public.memory_postings VALUES ('default', 'postgresql', 5, 'tsk_01a24d4e70c78530a4f94f7c', 2, 11);
INSERT INTO public.memory_postings VALUES ('default', 'support', 5, 'tsk_01a24d4e70c78530a4f94f7c', 1, 11);
INSERT INTO public.memory_postings VALUES ('default', 'target', 5, 'tsk_01a24d4e70c78530a4f94f7c', 2, 11);


--
-- Data for Name: memory_search_totals; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memory_search_totals VALUES ('default', 5, 46);


--
-- Data for Name: memory_term_counts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.memory_term_counts VALUES ('default', '20', 1);
INSERT INTO public.memory_term_counts VALUES ('default', '50', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'bulk', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'connect', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'exhaust', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'load', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'pgbouncer', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'pool', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'rais', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'size', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'chose', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'engin', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'fail', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'integr', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'intermitt', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'invoic', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'test', 1);
INSERT INTO public.memory_term_counts VALUES ('default', '3', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'certbot', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'certif', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'renew', 1);
INSERT INTO public.memory_term_counts VALUES ('default', '15', 1);
INSERT INTO public.memory_term_counts VALUES ('default', '16', 2);
INSERT INTO public.memory_term_counts VALUES ('default', 'cutov', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'postgresql', 2);
INSERT INTO public.memory_term_counts VALUES ('default', 'support', 1);
INSERT INTO public.memory_term_counts VALUES ('default', 'target', 2);


--
-- Data for Name: messages; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.messages VALUES ('default', 'msg_01a24d4e717da6ed2f8f2ff6', 'tsk_01a24d4e70c78530a4f94f7c', 'tsk_01a24d4e70c78530a4f94f7c', 'MESSAGE_ROLE_USER', 'MESSAGE_KIND_TEXT', 'Please move billing to PostgreSQL this week.', 1796593316221757, NULL, 1);
INSERT INTO public.messages VALUES ('default', 'msg_01a24d4e71882a3ac7a67a91', 'tsk_01a24d4e70c78530a4f94f7c', 'tsk_01a24d4e70c78530a4f94f7c', 'MESSAGE_ROLE_AGENT', 'MESSAGE_KIND_TEXT', 'Dumped the schema: 41 tables.', 1796593316232262, NULL, 1);
INSERT INTO public.messages VALUES ('default', 'msg_01a24d4e718fdef5365f4714', 'tsk_01a24d4e70c78530a4f94f7c', 'tsk_01a24d4e70c78530a4f94f7c', 'MESSAGE_ROLE_TOOL', 'MESSAGE_KIND_TEXT', 'pgloader: DATETIME(6) truncated', 1796593316239744, NULL, 1);
INSERT INTO public.messages VALUES ('default', 'msg_01a24d4e7198fbae9bef54f3', 'tsk_01a24d4e70c78530a4f94f7c', 'tsk_01a24d4e70c78530a4f94f7c', 'MESSAGE_ROLE_USER', 'MESSAGE_KIND_TEXT', 'Use PostgreSQL 16, not 15.', 1796593316248083, NULL, 1);
INSERT INTO public.messages VALUES ('default', 'msg_01a24d4e71a24805e5ba7ba6', 'standup', '', 'MESSAGE_ROLE_USER', 'MESSAGE_KIND_TEXT', 'what is blocking billing?', 1796593316258273, NULL, 1);
INSERT INTO public.messages VALUES ('default', 'msg_01a24d4e7a1aea5e4f62253f', 'tsk_01a24d4e70c78530a4f94f7c', 'tsk_01a24d4e70c78530a4f94f7c', 'MESSAGE_ROLE_SYSTEM', 'MESSAGE_KIND_WAIT', '[Wait started] the change window opens', 1796593318424216, NULL, 0);
INSERT INTO public.messages VALUES ('default', 'msg_01a24d4e7a36ddd2d35e4db8', 'tsk_01a24d4e70c78530a4f94f7c', 'tsk_01a24d4e70c78530a4f94f7c', 'MESSAGE_ROLE_SYSTEM', 'MESSAGE_KIND_WAIT', '[Wait started] staging settles', 1796593318453359, NULL, 0);
INSERT INTO public.messages VALUES ('default', 'msg_01a24d4e7e1f7282670443ce', 'tsk_01a24d4e70c78530a4f94f7c', 'tsk_01a24d4e70c78530a4f94f7c', 'MESSAGE_ROLE_SYSTEM', 'MESSAGE_KIND_WAIT', '[Wait resolved] staging settles → 1s elapsed', 1796593319454457, NULL, 0);


--
-- Data for Name: model_calls; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: model_usage_totals; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: plan_item_claims; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: plan_items; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.plan_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 1, 'dump', 0, 'prepare', 'Dump the MySQL schema', 'PLAN_ITEM_STATUS_PENDING', '', '', '[]', '', '{}', '', NULL, NULL, NULL, 'PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED', '');
INSERT INTO public.plan_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 1, 'convert', 1, 'prepare', 'Convert types', 'PLAN_ITEM_STATUS_PENDING', '', '', '["dump"]', '', '{}', '', NULL, NULL, NULL, 'PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED', '');
INSERT INTO public.plan_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 1, 'cutover', 2, 'execute', 'Cut over', 'PLAN_ITEM_STATUS_PENDING', '', '', '["convert"]', 'deploy', '{"window":"02:00"}', '', NULL, NULL, NULL, 'PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED', '');
INSERT INTO public.plan_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 2, 'dry-run', 2, 'execute', 'Dry run on staging', 'PLAN_ITEM_STATUS_PENDING', '', '', '["convert"]', '', '{}', '', NULL, NULL, NULL, 'PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED', '');
INSERT INTO public.plan_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 2, 'cutover', 3, 'execute', 'Cut over', 'PLAN_ITEM_STATUS_PENDING', '', '', '["dry-run"]', '', '{}', '', NULL, NULL, NULL, 'PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED', '');
INSERT INTO public.plan_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 2, 'dump', 0, 'prepare', 'Dump the MySQL schema', 'PLAN_ITEM_STATUS_COMPLETED', 'schema dumped: 41 tables', '', '[]', '', '{}', '', NULL, 1796593316148125, NULL, 'PLAN_ITEM_STATUS_SOURCE_EXPLICIT', '');
INSERT INTO public.plan_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 2, 'convert', 1, 'prepare', 'Convert types', 'PLAN_ITEM_STATUS_IN_PROGRESS', '', 'DATETIME(6) columns', '["dump"]', '', '{}', '', 1796593316160095, NULL, NULL, 'PLAN_ITEM_STATUS_SOURCE_EXPLICIT', '');


--
-- Data for Name: plans; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.plans VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 1, 'initial plan', 1796593316039754);
INSERT INTO public.plans VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 2, 'a dry run first', 1796593316121962);


--
-- Data for Name: request_ids; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: running_summaries; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.schema_migrations VALUES (1, '0001_schema.sql');
INSERT INTO public.schema_migrations VALUES (2, '0002_leases.sql');
INSERT INTO public.schema_migrations VALUES (3, '0003_webhook_delivery_retention.sql');
INSERT INTO public.schema_migrations VALUES (4, '0004_work_claims.sql');
INSERT INTO public.schema_migrations VALUES (5, '0005_memory_search_length.sql');
INSERT INTO public.schema_migrations VALUES (6, '0006_memory_lengths_by_seq.sql');
INSERT INTO public.schema_migrations VALUES (7, '0007_webhook_secret_rotation.sql');
INSERT INTO public.schema_migrations VALUES (8, '0008_plan_item_claims.sql');
INSERT INTO public.schema_migrations VALUES (9, '0009_valid_time.sql');
INSERT INTO public.schema_migrations VALUES (10, '0010_retention.sql');
INSERT INTO public.schema_migrations VALUES (11, '0011_awaiting_person.sql');
INSERT INTO public.schema_migrations VALUES (12, '0012_model_calls.sql');
INSERT INTO public.schema_migrations VALUES (13, '0013_memory_postings.sql');
INSERT INTO public.schema_migrations VALUES (14, '0014_task_forks.sql');
INSERT INTO public.schema_migrations VALUES (15, '0015_retention_caps.sql');
INSERT INTO public.schema_migrations VALUES (16, '0016_knowledge_version_cursors.sql');
INSERT INTO public.schema_migrations VALUES (17, '0017_memory_scope_lengths.sql');


--
-- Data for Name: state_item_embeddings; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.state_item_embeddings VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 'c_adecdda99cb8', 'all-MiniLM-L6-v2-int8', '\xef93323de4fdf03b9de8483dc6cae0bc33f9ddbc0b10bfbc3173adbca7c92abcef8aa73c035803bd574165bdd463733db3b654bd704a7e3df791983d83f7b1bcbff8763deef4c2bc16a6e0bd7e2abcbc5c4c29bd0a9799bd1e8e8abd325bcb3c914314bc07b388bdae16503d3a30d13cf8121f3a58fa833c8b2610be8d81a6bce9993a3def38d7bcc68bcd3d8497a63b9fa0c53c5fb3863d2752f13d5904473d2561553d50709d3c2ce243bdd9b8193cc39ed8bb4b51843baf8f40bcd7d148bdf05bf93c37edc53d6c985d3caa48d33db3e4f93b53cd763cebbfc23bf538b93dc21ace3c8fd3a13d28d43c3d1301123d95995e3df0a0e0bc2eca3abdc4538d3c600c93bcbaf9a03db04327bd3f5206bd451a07bde3c4b5bc50b461bda62ac7bcd9b5d1bcd6bdc63cfb6526bd4633673b501b3b3d3b93ef3bcaa6893d5a47efbcaef0a83ca955b33ca14142bd0eb85a3d6c4940bd49ed0cbd29a7193d1d2eb73dec804d3dd62603bd4c9e103cb42a173d790cb73b42a69abc9a76b5bcafdd88bd9353ef3c3495573dccb1aebcee97253d9e59acbb1f5f133d89543d3c56ffb0bb19e730bde59f9ebce4c03a3d4867a53bbb4692bb5fdca23ca26fd9bc02429e3c67ad9b3d7e518ebd9528a6bc8b8c2c3d41c4edbb467fa6bbe2978cbbbc790cbdbb4d533d13d15f3d82ca983c253019bec88b91bc49a852b986563b3df2f0b3879575d4ba1cac51bd0784dcbca788273a05638e3d6aea89bd1d3e1bbd8345c23b718eacbb9723dcbc5201dfbca1ca71bce1ed34bdaafbf4bdfef416bdefa3af3b89100c3e4a8b2f3d84e4883d15369ebc76b1ea3cb400e2bdb5c2cfbdc3e8ffbbebe62cbc2470233d7273dc3c3bb796bbb0bf923dede5b9bc6304cbbba098adbda3fa053c682dd03c20fe9a3d21e3cb3cde80b8bd8854783dbc08adbcef3284bdc2a07fbdd05f3f3c7c6846bd2f0848bc1e57a73b6d91d8bcc5a6903d74cee5bdaf1b55bd3ae8d43d537220bdad5bd5b9aa3855bc0f03d13c4ddb8cbd4a987f3d2c4e52bca927debc7be995bb5cbf87bb4e12743d99f628bdad3b95bd52c0bbbdaf7e9b3c9d7938bc32fb1c3d880d363cef21ba3c6c41c93ad0c82b3d3fd5bd3cfb0b3e3d64b70bbdc8bb90bc0e06b53c4fa628b836330abd5a4feabc6eef1d3ca4b3f33c81f1e6bcaaecc43dde29a0bdee608e3d3c8c343d0f61ad3dd53e8f3cea326abd1a8db8ba390228be61cee83c8c4a593ca5c5883c3281113dd84260070b3d84bdaf9daabdfa77a6bcccd03e39609383bbe553b33c5e409b3cddaf013cc061ebbb37fdbc3deac9a53dc87c11bda29882bd57d984bdafab8b3c21df2fbc4381e53d83fff43af404573de3cd41bc8ad11b3d0036193dcf6496bd6e787fbd98ad8dbce6b2953dfbfea7bdcc7dd73d16eff9bca1dc823c378a51bd732ea2bbde55b2bc0a24023e169d23bd2bd1e43cbe3a97bd72f9153ddf260bbd77398abdbc6dd73bc967643d09a3fc3b62d4d43c0b39a4bcffed873dda8233bd9e95ddbd9861093d55310d3d5d8b03bd675b9dbdff228a3de97c6c3d7dbf8fbc3ede1c3d1f52be3df14641bd5d2a30bddd60c33df71867bc1c2c0dbda60a0b3d2b7a993c28297f3d12bc893df19d923d5598ecbbb721a23d6491973c214ec0bcacd8803dad98c1bc036483bdcfbcb1bd6977723b94d16ebd1c21543d4298b6bdeb1564bdc79a15bb46559bbcb22003bea4b09abb9605793cce8e07bc012865bb167f573c98adc1bbbdb3713dd12121bda979203c392ab8bcb4ccf83db345f8bc013c75b2f288623dfb07963de334453dbc8e12bd1568613d841b86bd9d53343d1f2ffabc87ec553c23d4813c40520bbcd3a5eabdc8a28ebb3966a53ddfcfc23c65e99abd617927bd5ef28bbd6b62023caa338cbc63a30a3dd3bccbbc4d1f39bcd1b1173db79d433de840c5bb03fa483dbf9f7d3d2600293d31089e3c13c4abb9ab16ea3d4717523ce05a42bd8124efbccae2d5bd0977b2bc30a7f73c4f6161bd1130723da78945bc6ee41abd2b9eb0bdead355bdb6aba93d1d3da73ca392a5bd6954233de1f1283dda7d16ba4e94043d5802c63c71961a3da72400bd7a88333dffea14bc2074af3d08f4e7bc753a2b3d352d023c2467a1bd7d528dbda9bca7bd2f4d57bc', 1796593318345470);
INSERT INTO public.state_item_embeddings VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 'q_b720156e6a4b', 'all-MiniLM-L6-v2-int8', '\xfb236f3c09d4f9bb5803043e2065493dc605433dfb3707bd8d47843da5469cbdef523ebcbd9289bc9d54ca3c1baa8bbc91c784bd8ead32bdfe09ec3c2e2901bdfc7a17bd49364dbdbc398fbc79dbc6bc80dbf0bbc8bd1abd1e0b7ebda7fc333d91d1543d82d97bbc0c3a433d17a43ebc36c4cebb5c0267bde4d4d03b4b661fbcd2b5093cb2f09ebbd3b41cbc8ac0f43c0ec1643d8c17063dc41daf3d93e6b2bcd5d88c3d7d99cdbc2e2a01bd048e50bda7ac6bbcac731b3d7d30e03c647fd03c9edd0abb45db4f3d18e79f3d61fc31bd622012bc0014ed3ddefd853d047d043d8f1f7a3cefe78cbd238a8fbcf051593de672e5bd4263083d0e7465bd8ec32b3bf085c63cd65b38bc11d432bc0e6115bd5680193d5f1fee3cd65b12bc67e3f5bc15a9443d1056ccbdfa15fabbc9200fbd8a9b3d3dbaf4cabca3108e3b79f7c3bc3eae11bd10cec1bd78839dbd734578b932b556bdbe3194bc94b01ebde572e7bc62a04a3da50a2d3d233ca3bde4f1f93c0f64cf3c84334fbcb513aebdd6f43a3d71f083bc679d073de2d3b5bd2a900a3e44b9cabdc5ce343d3c35863db18835bc0e0c0f3d2d72d0bb068b51bd09e434bd058fd83cc0949fbde798bd39e44b053d8657353cfd35e1bbd6af383dbb5ed03cad0cd93d0c3fbc3b48a4263dd82ebabdc6764abb0478943dc7974a3c8b64bc3cf1ab68bdd2b7f13d945dcdbc3618b489394895b94eb828bda7bc37bde46f0d3d962aeb3dcf05903cd280b6bd42bfafbc2819e1bbe18ef53b78caba3cdc2bdfbdfaaa183a71dff8bb1050583ccfb512bda2a5e8bb525116bd53a98bbd9ed0323de2a4823c3c00d03c38d53abd34cff93dcbcb54bdd29ffbbc4bccd4bc5ce5abbcf0c4c83b73c0d43c6ce4123c2ef6c83d92dec53ddcbd613cdba9c5bdeee8093d3fb4863c72a3ffbcf492f3bc1e2c29bd69f5f53bd5d7093d41e326bdca64be3cff5f27bd5ad5c3bd65e0023d06dbf93c41c8883c27dd483d9ec4203db42d193d25781e3d6cde4cbc9acabcbdb329eebc49f5db3cc04742bd379f8d3c80f83d3b9a3fe93c3a1bf93c1394b7bc7171043d29f95fbc5978eb3c41174ebcfaaddbbc871a95bd43ce5bbd548188bdab10be3dc826afbd1f25d43c09f89dbca5c99e3bf7853dbdb579653dedaeee3deb7e26bd902f3a3db811393d9f99873d47ccab3c754f753dbbb45fbdb5980ebd9e9bb6bd752d56bd8efb71bc39bc34bd4dfbe0bcd764d93d8877a13cd233303d2d4f27091d1c56bb9bd201bdba68b83c14ae073b0a9af33ce3798cbda1f22bbde1478e3d8c163bbd0252f33c8f2209bc4a00023c046c183c83dde23c86ed9fbc1ae688bd4283213e2a7b063df0422a3cfb2c67bd0e6429bd288718bdb6fd3cbc10d3123d14336abdb624c039080c063ed42a9abbf673d1bd901ba6bd286d83bd021b5f3b7beb153d0b2319bd50ff083de464053e6c6b30be053f4f3d673a3ebd1e1c9c3cdf8a343dacd7e3bc54ed0bbdc3631b3e84c1a23b43f99f3d2c2f5dbca1ab523d78dc45bd56ec223d8f55d3bc72ba8d3d6deaf43c9f09a43d178eaabbfaf66a3c765e9f3c35e590bce1d6b23c35f48fbb2b98ccbcc4c2803af8b6183dde64d3b900529a3dda5a8abdcf727fbc32ffbe3caa3d503d91f88b3c53e0583c07b4c7bd4484a1bdc13d21bd56dbbebcefbf08bd96ff81bd20c616bd4a048fbcfe651ebb50aea8bdbc7f38bd5e369bbca221173dacc7913d7c5eb2bddb7f44bd328c91bcf62c583cb81a2d3da117303d82d47bbc3a1e19bde519b6bd83aeb1bd0fdf93b2d284593dee14833c115cdcbc44aa3ebdcfba1c3db296f23c9d318a3d975d2ebb1b4c8b3cca451e3d0d0f6c3d5fb8803d10a3303d45e880bda1b75c3cce871fbc3c022f3ca259b03c4aa8d3bd688bbd3c3fc618bef9d1abbc4643acbcbaf7743cc93c803d9b7961bdc507173ca004f33d7797f6bc41f5963d59d1003a4833403d9f6a383cf017673c17a3c03d3810c53cd4ea38bce2ddabbc65bbb03df907553d51d593bc1b55843cdb3a6a3b34ab2b3d32f03a3cc1e38e3b55b9b03c9d70d53c1f73273de48904bca3b104bbbd31b5bc5016563dc97d813dec5c8cbdde2476bd7707f8bc4493403d3ea5b43c8f3fa2bd07d4e63cfe4d83bdd82216bddffc1f3d', 1796593318345470);
INSERT INTO public.state_item_embeddings VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 'r_5a43ab288909', 'all-MiniLM-L6-v2-int8', '\xf31c38bd940a5f3df1263a3c61ca49bdd788c2bdb68cd0bdcb00a5bdf5af953d1ab6c63d65996c3d3686ca3c5c400dbdb50817bdb7f92abd59bc3ebcd30f83bd62c43ebd675c89bd142e12bde9472b3da211d53bc6501dbd061998bd65fa713c2fd50f3e6237153dc034c2bd545d253cbec7103d9dd99bbd780f55bd6dbdda3d04d844bc80d999bd85cc213dbb6336bdc3eee73c2ce3993d2cd6b93da19d1dbc7f9e513dc021d8bb112c833d222baebcf8c735bd44d6403c339881bdab4f8b3d9d95263d66c7433d06b1bc3c3859aa3c70f983bc8875773d81c900bd0245c9bc086e953dcaa7483ccece5d3ca483e43a06e6dbbd4d08c43c777d15bd6c8bcebcd08c09bda160213b01ab38b92b882dbd029b0cbe679328bc177bfc3d5d97993d9946203d22f53e3d30cd5d3d65bbfebc448de73cd2d255ba3311f6bc823e8c3ce9cca83c2fe8cebc42a550bdcf81ebbba3f92d3d86f16cbdfa7dd83dc50b85bd7d33213dd4d3a93c914f863b987d6e3d4c627c3c82865b3cef0bba3c6e4d203db681483c0abb3a3d6736733dafcf193d1fc6163d5f1b9bbc0dd9093db1832dbd25f4b33cbece8dbc9d4a663dcd4ad9bc54a74f3db63813bd0a31e03c642dc4bda8ae743d581247bb9a0e10bdb4d7f7bcc15a833ca5968bbcd58790bcaa7093bdc9e42f3c2c40a33df4de28bdfa4be8bbf9eaaebcbc42803d1ab2b23d7f01a608a102d4bdbb148ebd4b564b3dcfbc5cbdbc5f583d8b735e3c6671c33cd9cfb33d828eab3c522c1abdf037f3bb0c571b3d2d8b12bbbc3903bd03b7edbc23b0603a54f4bc3c4e6bc23d15f79cbd10293ebbedec82bd1edaf7bdeee9a03cf221263de470fcbbe6b8923d4d1730bd3f451ebba6bcadbc14b49c3aa311ce3dc7ad8a3ddcfc773d70854a3cdff4a1392bc3e33c22d28b3d584a293c6919433db8066bbc28259dbd54012d3d2e1a4f3cfc9e90bdc3391fbecd17bc3dab19693de8254dbdc7f212bc49306a3d1e0aa0bcaa7daf3c0db6e73a10f9a83c18fdfdbbb7349fbce0419e3df2381b3c336aa1bbd22704bd9a0b2b3d51f7773db37dc33ccf2501bd987aacbdbe3a1f3be31a833c181bddbbbea2163da9b8363d3f2e85bcaa3ba43b334219bda306153d2cf69bbc7ea197bb44509d3db80698bc72451c3dcd374dbd6c85f5ba2079813cec9c5b3d657603bddfc4d93be0f5a83dcb112f3dd804673de79990bc53e082bca37d543de80713bc3199093a9c958d3d5d11f1bb6d91ec88a499b6bdb0c9c83dd44766bd06c5f63c96c6023db5d9d93d369f223d0beb16bdb08b1a3d87dc2f3de6ab443d9c1ba23c42361cbe84c01fbca4868c3d50dd8cbd918f8c3d20b5cfbcef71313d464053bcd58f013daba08f3a9f7c03bd8dbda53df7d0aabc23d1093d8c6f9fbdd2c996bd97e1123da880323df6ac5e3c700785bdef2d53bb30b915bc394e5abdf95a54bda62315bcad30b2bca627313d77c96abd57bf9dbbcca3cfbcaafa1d3df514adbb01c58bbb50ffd4bd28b9bb3d5e28aabc87fc9d3c12ed743b7b20f2bc86fc463d247e0d3c9a6d053ee70989bd285a9a3d98bf2f3cf5a309bd113b34bc502820bd40acd6bd1a22f2baeadf46bb50c08dbdfdf3d3bc9ca4db3d0c495f3c0ca19bbdc130943d610f94bcc6566fbd01adb33bc2552b3d3655c6bdfcb0f7ba8fbd323d3cb9ffbb2b15f2bcf4962f3d87ed1f3d7ca783bcc59fea3c05eec33bd731acbb8c4acebd3554efbcc00a163db7a6103c1819fbbc36c7083e1184fbbc8afa733d195d323d1573e83ca1a9b5bb4f0a82b2f2e3013cac5973bdadba23bc87969b3dd54970bb887bd6bd70cd3dbc924d193927947fbd0404df3c54ffd13a144df1bcef2db63c68595fbdc0dc00bd087632bde72db9bd924bcfbc5f1532bd8ce449bcdc7818bd9549923c17478bbddf60aebd39fa44bd4371083d24018abdf913063e1f850bbcbb8594bcb56b06bdc6b4523d41df9cbbef61b5bcc696aebcee389bbd11a7813cb795d03cfd1d363d848eaebc7a50953c8ee9bdbd2a4b3e3bf661d23943cc06bcb158713cc81180bde17471bb8d1a94bcd8febdbde7df823cbf60883c8347eebb7519243d3dbb9e3dd9d71dbd66c31ebd5d7e8fbda5972ebc8762633d2efab2bc74abbdbd6f0569bc29dc173a', 1796593318345470);
INSERT INTO public.state_item_embeddings VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 'd_ebeb578d5b06', 'all-MiniLM-L6-v2-int8', '\x18e5903db38c4fbc4ba42fbdaaff84bd8350b53b6431983c64750dbb125310bd3c1387bd4fcc14bdce5649b934cbc03b85ae0bbbfe8e53bdccf8d33b98f0123dc4cde03dfdc8be3c5bc3b53c370702bdcf36e0bd7194d4bd8497a4bda6dd673cf8214dbd68dac7bd04bf5ebd1bf8c93c0e98abbdddd03cbdb14606bd25ca94bb54ca663d09857b3dfbe686bbeb7facbcd3e1763d0174adbda6e7a73b8d3abebc8393913d11024b3d6d15a3bd78d21c3df4ab11bd13e1bbbd07f120bdff27a43db141923c5c5ab1bc821011bd53ae40bcc7da9cbce857b03c0d92873c8e01843d29204abd785df13ccace163d9a2ec13b5c4293bd3bd04fbd359defbce9811f3d30d102bd078a35bdf5cf973d4244b2bcd214bd3c283d4ebdda811fba3cbd483c31668ebddab329bc827a50bcc0398a3d6a163bbcd905b5bcc494213d32fce0bcbce141bdcc056dbda2b35cbd0c9b393cf07972bd494e01bdb8c0103cb8ee11bdc36d1c3de7499b3c882b7e3ccdaf3dbd0840003df58fb13cf52ae33c051f31bc4267603d1ac0b1bdecd10b3deeac95bcba2de93c303b9c3d9e2f093dd912883d3cd8edbd59b58abdcb3302bd9370d33cd45c2cbd976d243cbaf94c3dddb394bc4bbd043d288578bdb27c933decfe21bd0a10c9bdfdba6abdf0ebdd3bbecabfbdbd13233de3d081bce56876bb95e180bc79ba95bdbdd4bfbc16e312bdb9dd8b083f8a423dc756583db30ba43dc8f283bd59061abc3f9d8abdc790113dbd92b93d6a596ebd1940f03c761c25bd222392bd4b47d9bce0b8dc39aad06b3da05d213d6bf15e3cfb496f3d75664a3ddf0e1f3d187f86bc1549b43dcf1bd3bd1b55783ccc148d3d2645733d914c8fbd18688ebc534f4e3d1257753ba7a9a0bcc0b8f83cc1f86fbd4afac53cf3f7863d0d10873b96717abd4cfeccbc4b4028bdb04bf8bc89d3d73df9586f3d85c5853bbe4603bd0765b13d273d123dc14b61bc1149b5bd3b530b3df5d6823b402cd3bc56f1c83ce6e217bd18626a3d3194cfbc74a780bd9f4b6fbda5ba8bbd0f17bf3d3dea3e3de220173cc2e787bdbc4a0abde0f7af3c93c4453df30100bd607bd6bcd326a8bd4b20923c2997be3d96a49abc84b90a3cc6d0ae3cac5d4e3dd9bdc13df7fcb3bc545f90bdd5e6623d18525b3dfeaa713cf6ca04bcf66b2cbc0040c3bdc7cdc73cda31b3bcfb76babcb3980d3d48b9ed3c4fbedebc395f903c154873bb5d68153d8e1c033dd113843da5b8983cdc58ba8925adfc3aa54d63bd875ea23de2aa803c858f3e3c52ad20bcf9c6683d44af69bd82fb923d3e8d903dfda62ebc460d0cbd4271e93dd2fab93c84b034bd6894903db9cddabc3b52943cc68b48beda38a1bcf96346bd800eff3cde420d3b0727b03db41f053e99b99ebd99d18d3d834390bd1c5de5bdd60f0e3d6462353d3689153d0849c8bc011d7b3d5ad2ccbd2631f6bc19b31e3d76d71b3bd140403d6a7b0bbc9214da3cc8a8bd3c9df1913dcccc263dff9c9cbc332dae3d8a66ae3de1ac813c90fa3abc9397093c14e92ebd7cc2093d6e89503c436f22bd1b2cc93d9bc7dabcdddfe4b9b2cc7c3cb14b82bd1a75a0bd40c6d4ba107bf73ca50c6f3dcb10b2bc6fe42e3d98506cbdadedbe3c4b3f1f3d9f7b16bd14eb2bbdfab39bbd9a5c2b3ddd1f833d47fb7a3d96294cbd94b654bd8a8f8f3bcc00493d815612bd60f5833bd1036f3d310de3bbb728963c563299bc86751d3df3927ebd6dfcc93c4f4495bc84fa6fbdf080e63c327776bdfeb313bd539831bd04d13ebab98b8bbde16f9eb2c178c1bb29aa673c4d674ebd7d96b33ba014343ca2fb8c3dd0f0c93be1da513dbc41473da627343db548413d0b43f3bcbffdeabb3f3b953db82e82bdcc30f2bd14db6a3c21215fbda4a2413ba041b4bc614b32bd89820e3dcb8306bdfaffcabc37223f3d39a26bbc098c58bc8dba983d10e94f3d00558fbc77c0a33d9a063c3b1c2c7cbc849f3bbd8f558f3dfb1508bd8fdc903d9243003e0be3253dc315e13c7ea8b73c6741e7bc6c1b1cbdcbb298bc730c37bd41a257bd6324d2bded0abfbc4442f2bc55c5a83d25d5c33cab7591bc1ceea03d2ab9063d4daf0e3ea79ceab7f21d9abd5e86f8bcb72ac1bc62dd12bd173deb3d51b5e3bcd7a9893ca4b0123d', 1796593318389862);


--
-- Data for Name: state_item_entries; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.state_item_entries VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 'd_ebeb578d5b06', 'mem_01a24d4e79f61677d4736aee', 'decision', '', '15 is out of support by the cutover', 1796593318389862);


--
-- Data for Name: state_items; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.state_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 'c_adecdda99cb8', 'constraint', 'No downtime during business hours', 'active', 'medium', '["cutover"]', '[]', '', '{}', 0, '[]', 0, 'agent', 1796593316909433, 1796593316909433, 1796593318345470, NULL, '');
INSERT INTO public.state_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 'q_b720156e6a4b', 'question', 'Who signs off the cutover?', 'open', 'medium', '[]', '[]', '', '{}', 0, '[]', 0, 'agent', 1796593316909433, 1796593316909433, 1796593318345470, NULL, '');
INSERT INTO public.state_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 'r_5a43ab288909', 'risk', 'Invoice totals could round differently', 'active', 'medium', '[]', '[]', '', '{}', 0, '[]', 0, 'agent', 1796593316909433, 1796593316909433, 1796593318345470, NULL, '');
INSERT INTO public.state_items VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 'd_ebeb578d5b06', 'decision', 'Target PostgreSQL 16', 'active', 'high', '[]', '[]', '', '{}', 0, '[]', 0, 'agent', 1796593318380585, 1796593318380585, 1796593318389862, NULL, '');


--
-- Data for Name: state_watermarks; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: tasks; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.tasks VALUES ('default', 'tsk_01a24d4e70fe6ef561323782', 'Rotate the TLS certificates', '', 'TASK_STATUS_PENDING', '', '', '{}', '{}', 'APPROVAL_MODE_AUTO', '', '', '{"failed_stage":"","failed_step":"","message":""}', 0, 1, 1796593316094803, NULL, NULL, NULL, NULL, NULL, NULL, 1796593316094803, '[]', 0, '', 0);
INSERT INTO public.tasks VALUES ('default', 'tsk_01a24d4e70c78530a4f94f7c', 'Migrate the billing database', 'Move billing from MySQL to PostgreSQL without downtime', 'TASK_STATUS_PENDING', '', '/srv/billing', '{"owner":"dana","ticket":"OPS-118"}', '{"team":"payments","active_wait_ids":["wai_01a24d4e7a18d63333ecf9c3"],"last_wait_state":"resolved","last_wait_event_at":1796593319.454457}', 'APPROVAL_MODE_AUTO', '', '', '{"failed_stage":"","failed_step":"","message":""}', 2, 18, 1796593316039754, 1796593316039754, NULL, NULL, NULL, NULL, NULL, 1796593319454457, '[]', 0, '', 0);


--
-- Data for Name: waits; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.waits VALUES ('default', 'wai_01a24d4e7a18d63333ecf9c3', 'tsk_01a24d4e70c78530a4f94f7c', 'the change window opens', 'external', '{"resolver":"change manager","kind":"EXTERNAL_WAIT_KIND_UNSPECIFIED","question":"","plan_item_id":"","resume_status":""}', 'WAIT_STATUS_WAITING', '', NULL, NULL, 0, 'cor_01a24d4e7a17b89cd36b17a2', 0, 1796593318424216, NULL, NULL, NULL);
INSERT INTO public.waits VALUES ('default', 'wai_01a24d4e7a3586d54e624bf3', 'tsk_01a24d4e70c78530a4f94f7c', 'staging settles', 'timer', '{"duration_us":1000000}', 'WAIT_STATUS_RESOLVED', '1s elapsed', NULL, NULL, 0, 'cor_01a24d4e7a33790b2969b749', 0, 1796593318453359, 1796593319454457, NULL, NULL);


--
-- Data for Name: webhook_cursors; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: webhook_deliveries; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: webhook_secrets; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: working_memories; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.working_memories VALUES ('default', 'fixture-agent', '{"agent_id":"fixture-agent","current_plan":"convert types","active_constraints":["no downtime"],"task_context":{"task":"tsk_01a24d4e70c78530a4f94f7c"},"scratchpad":["t","i","n","y","i","n","t"," ","→"," ","s","m","a","l","l","i","n","t"],"updated_at":1796593318414167,"revision":1}', 1796593318414167);


--
-- Name: artifacts_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.artifacts_seq_seq', 1, true);


--
-- Name: episodes_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.episodes_seq_seq', 1, true);


--
-- Name: knowledge_history_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.knowledge_history_seq_seq', 1, true);


--
-- Name: memory_entries_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.memory_entries_seq_seq', 5, true);


--
-- Name: action_logs action_logs_namespace_action_id_sequence_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.action_logs
    ADD CONSTRAINT action_logs_namespace_action_id_sequence_key UNIQUE (namespace, action_id, sequence);


--
-- Name: actions actions_namespace_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.actions
    ADD CONSTRAINT actions_namespace_id_key UNIQUE (namespace, id);


--
-- Name: artifacts artifacts_namespace_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.artifacts
    ADD CONSTRAINT artifacts_namespace_id_key UNIQUE (namespace, id);


--
-- Name: artifacts artifacts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.artifacts
    ADD CONSTRAINT artifacts_pkey PRIMARY KEY (seq);


--
-- Name: context_snapshots context_snapshots_namespace_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.context_snapshots
    ADD CONSTRAINT context_snapshots_namespace_id_key UNIQUE (namespace, id);


--
-- Name: context_snapshots context_snapshots_namespace_task_id_sequence_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.context_snapshots
    ADD CONSTRAINT context_snapshots_namespace_task_id_sequence_key UNIQUE (namespace, task_id, sequence);


--
-- Name: episodes episodes_namespace_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.episodes
    ADD CONSTRAINT episodes_namespace_id_key UNIQUE (namespace, id);


--
-- Name: episodes episodes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.episodes
    ADD CONSTRAINT episodes_pkey PRIMARY KEY (seq);


--
-- Name: event_cursor event_cursor_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_cursor
    ADD CONSTRAINT event_cursor_pkey PRIMARY KEY (id);


--
-- Name: event_retention event_retention_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_retention
    ADD CONSTRAINT event_retention_pkey PRIMARY KEY (namespace);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (cursor);


--
-- Name: knowledge_history knowledge_history_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.knowledge_history
    ADD CONSTRAINT knowledge_history_pkey PRIMARY KEY (seq);


--
-- Name: knowledge knowledge_namespace_category_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.knowledge
    ADD CONSTRAINT knowledge_namespace_category_key_key UNIQUE (namespace, category, key);


--
-- Name: knowledge knowledge_namespace_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.knowledge
    ADD CONSTRAINT knowledge_namespace_id_key UNIQUE (namespace, id);


--
-- Name: learned_patterns learned_patterns_namespace_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.learned_patterns
    ADD CONSTRAINT learned_patterns_namespace_id_key UNIQUE (namespace, id);


--
-- Name: learned_patterns learned_patterns_namespace_pattern_type_pattern_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.learned_patterns
    ADD CONSTRAINT learned_patterns_namespace_pattern_type_pattern_key_key UNIQUE (namespace, pattern_type, pattern_key);


--
-- Name: leases leases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.leases
    ADD CONSTRAINT leases_pkey PRIMARY KEY (name);


--
-- Name: memory_embedding_model memory_embedding_model_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_embedding_model
    ADD CONSTRAINT memory_embedding_model_pkey PRIMARY KEY (id);


--
-- Name: memory_embedding_queue memory_embedding_queue_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_embedding_queue
    ADD CONSTRAINT memory_embedding_queue_pkey PRIMARY KEY (seq);


--
-- Name: memory_embeddings memory_embeddings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_embeddings
    ADD CONSTRAINT memory_embeddings_pkey PRIMARY KEY (seq);


--
-- Name: memory_entries memory_entries_namespace_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_entries
    ADD CONSTRAINT memory_entries_namespace_id_key UNIQUE (namespace, id);


--
-- Name: memory_entries memory_entries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_entries
    ADD CONSTRAINT memory_entries_pkey PRIMARY KEY (seq);


--
-- Name: memory_entry_relevance memory_entry_relevance_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_entry_relevance
    ADD CONSTRAINT memory_entry_relevance_pkey PRIMARY KEY (subtask_id, entry_seq);


--
-- Name: memory_entry_tags memory_entry_tags_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_entry_tags
    ADD CONSTRAINT memory_entry_tags_pkey PRIMARY KEY (tag, entry_seq);


--
-- Name: memory_postings memory_postings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_postings
    ADD CONSTRAINT memory_postings_pkey PRIMARY KEY (namespace, term, seq) INCLUDE (frequency, length);


--
-- Name: memory_search_totals memory_search_totals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_search_totals
    ADD CONSTRAINT memory_search_totals_pkey PRIMARY KEY (namespace);


--
-- Name: memory_term_counts memory_term_counts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_term_counts
    ADD CONSTRAINT memory_term_counts_pkey PRIMARY KEY (namespace, term);


--
-- Name: messages messages_namespace_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT messages_namespace_id_key UNIQUE (namespace, id);


--
-- Name: model_usage_totals model_usage_totals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.model_usage_totals
    ADD CONSTRAINT model_usage_totals_pkey PRIMARY KEY (namespace);


--
-- Name: plan_item_claims plan_item_claims_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plan_item_claims
    ADD CONSTRAINT plan_item_claims_pkey PRIMARY KEY (namespace, task_id, item_id);


--
-- Name: plan_items plan_items_namespace_task_id_plan_version_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plan_items
    ADD CONSTRAINT plan_items_namespace_task_id_plan_version_id_key UNIQUE (namespace, task_id, plan_version, id);


--
-- Name: plans plans_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.plans
    ADD CONSTRAINT plans_pkey PRIMARY KEY (namespace, task_id, version);


--
-- Name: request_ids request_ids_namespace_request_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.request_ids
    ADD CONSTRAINT request_ids_namespace_request_id_key UNIQUE (namespace, request_id);


--
-- Name: running_summaries running_summaries_namespace_thread_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.running_summaries
    ADD CONSTRAINT running_summaries_namespace_thread_id_key UNIQUE (namespace, thread_id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (number);


--
-- Name: state_item_embeddings state_item_embeddings_namespace_thread_id_uid_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.state_item_embeddings
    ADD CONSTRAINT state_item_embeddings_namespace_thread_id_uid_key UNIQUE (namespace, thread_id, uid);


--
-- Name: state_item_entries state_item_entries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.state_item_entries
    ADD CONSTRAINT state_item_entries_pkey PRIMARY KEY (namespace, memory_entry_id, thread_id);


--
-- Name: state_items state_items_namespace_thread_id_uid_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.state_items
    ADD CONSTRAINT state_items_namespace_thread_id_uid_key UNIQUE (namespace, thread_id, uid);


--
-- Name: state_watermarks state_watermarks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.state_watermarks
    ADD CONSTRAINT state_watermarks_pkey PRIMARY KEY (namespace, thread_id);


--
-- Name: tasks tasks_namespace_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_namespace_id_key UNIQUE (namespace, id);


--
-- Name: waits waits_namespace_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.waits
    ADD CONSTRAINT waits_namespace_id_key UNIQUE (namespace, id);


--
-- Name: webhook_cursors webhook_cursors_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_cursors
    ADD CONSTRAINT webhook_cursors_pkey PRIMARY KEY (namespace, task_id);


--
-- Name: webhook_deliveries webhook_deliveries_namespace_task_id_cursor_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_namespace_task_id_cursor_key UNIQUE (namespace, task_id, cursor);


--
-- Name: webhook_secrets webhook_secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_secrets
    ADD CONSTRAINT webhook_secrets_pkey PRIMARY KEY (namespace);


--
-- Name: working_memories working_memory_snapshots_namespace_agent_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.working_memories
    ADD CONSTRAINT working_memory_snapshots_namespace_agent_id_key UNIQUE (namespace, agent_id);


--
-- Name: action_logs_by_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX action_logs_by_time ON public.action_logs USING btree (namespace, created_at);


--
-- Name: actions_by_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX actions_by_task ON public.actions USING btree (namespace, task_id, created_at, id);


--
-- Name: artifacts_by_path; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX artifacts_by_path ON public.artifacts USING btree (namespace, path);


--
-- Name: artifacts_by_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX artifacts_by_task ON public.artifacts USING btree (namespace, task_id, created_at, seq);


--
-- Name: artifacts_by_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX artifacts_by_time ON public.artifacts USING btree (namespace, created_at, seq);


--
-- Name: episodes_by_agent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX episodes_by_agent ON public.episodes USING btree (namespace, agent_id, action, created_at, seq);


--
-- Name: episodes_by_archival; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX episodes_by_archival ON public.episodes USING btree (namespace, archived_at, created_at, seq);


--
-- Name: episodes_by_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX episodes_by_task ON public.episodes USING btree (namespace, task_id, created_at, seq);


--
-- Name: episodes_by_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX episodes_by_time ON public.episodes USING btree (namespace, created_at, seq);


--
-- Name: episodes_expiring; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX episodes_expiring ON public.episodes USING btree (expires_at) WHERE (expires_at IS NOT NULL);


--
-- Name: events_by_namespace; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_by_namespace ON public.events USING btree (namespace, cursor);


--
-- Name: events_by_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_by_task ON public.events USING btree (namespace, task_id, cursor);


--
-- Name: events_expiring; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_expiring ON public.events USING btree (expires_at) WHERE (expires_at > 0);


--
-- Name: events_of_capped_entries; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_of_capped_entries ON public.events USING btree (namespace, created_at) WHERE (type = 'EVENT_TYPE_MEMORY_ENTRY_ADDED'::text);


--
-- Name: events_of_capped_messages; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_of_capped_messages ON public.events USING btree (namespace, created_at) WHERE (type = 'EVENT_TYPE_MESSAGE_POSTED'::text);


--
-- Name: events_of_knowledge; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_of_knowledge ON public.events USING btree (namespace, created_at) WHERE (type = 'EVENT_TYPE_KNOWLEDGE_UPSERTED'::text);


--
-- Name: knowledge_by_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX knowledge_by_key ON public.knowledge USING btree (namespace, key);


--
-- Name: knowledge_history_by_entry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX knowledge_history_by_entry ON public.knowledge_history USING btree (namespace, knowledge_id, seq);


--
-- Name: learned_patterns_by_frequency; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX learned_patterns_by_frequency ON public.learned_patterns USING btree (namespace, pattern_type, frequency, last_seen);


--
-- Name: memory_embeddings_hnsw; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_embeddings_hnsw ON public.memory_embeddings USING hnsw (((embedding)::public.vector(384)) public.vector_cosine_ops);


--
-- Name: memory_entries_by_subtask; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entries_by_subtask ON public.memory_entries USING btree (namespace, task_id, subtask_id, created_at);


--
-- Name: memory_entries_by_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entries_by_task ON public.memory_entries USING btree (namespace, task_id, created_at, seq);


--
-- Name: memory_entries_by_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entries_by_time ON public.memory_entries USING btree (namespace, created_at, seq);


--
-- Name: memory_entries_by_type; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entries_by_type ON public.memory_entries USING btree (namespace, task_id, type, created_at);


--
-- Name: memory_entries_capped; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entries_capped ON public.memory_entries USING btree (namespace, created_at, seq, expires_at, capped) WHERE (capped = 1);


--
-- Name: memory_entries_expiring; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entries_expiring ON public.memory_entries USING btree (expires_at) WHERE (expires_at IS NOT NULL);


--
-- Name: memory_entries_lengths; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entries_lengths ON public.memory_entries USING btree (namespace, search_length);


--
-- Name: memory_entries_lengths_by_seq; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entries_lengths_by_seq ON public.memory_entries USING btree (namespace, seq) INCLUDE (search_length);


--
-- Name: memory_entries_lengths_by_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entries_lengths_by_task ON public.memory_entries USING btree (namespace, task_id) INCLUDE (search_length);


--
-- Name: memory_entries_search; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entries_search ON public.memory_entries USING gin (search);


--
-- Name: memory_entry_relevance_by_entry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entry_relevance_by_entry ON public.memory_entry_relevance USING btree (entry_seq, subtask_id);


--
-- Name: memory_entry_tags_by_entry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entry_tags_by_entry ON public.memory_entry_tags USING btree (entry_seq, tag);


--
-- Name: memory_entry_tags_lengths; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_entry_tags_lengths ON public.memory_entry_tags USING btree (namespace, tag, entry_seq) INCLUDE (search_length);


--
-- Name: memory_postings_by_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memory_postings_by_task ON public.memory_postings USING btree (namespace, task_id, term, seq) INCLUDE (frequency, length);


--
-- Name: messages_by_thread; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX messages_by_thread ON public.messages USING btree (namespace, thread_id, created_at, id);


--
-- Name: messages_capped; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX messages_capped ON public.messages USING btree (namespace, created_at, id, expires_at, capped) WHERE (capped = 1);


--
-- Name: messages_expiring; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX messages_expiring ON public.messages USING btree (expires_at) WHERE (expires_at IS NOT NULL);


--
-- Name: model_calls_by_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX model_calls_by_task ON public.model_calls USING btree (namespace, task_id);


--
-- Name: plan_item_claims_by_expiry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX plan_item_claims_by_expiry ON public.plan_item_claims USING btree (expires_at);


--
-- Name: plan_items_awaiting_person; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX plan_items_awaiting_person ON public.plan_items USING btree (namespace, task_id, plan_version) WHERE (status = ANY (ARRAY['PLAN_ITEM_STATUS_AUTH_REQUIRED'::text, 'PLAN_ITEM_STATUS_INPUT_REQUIRED'::text]));


--
-- Name: state_item_entries_by_item; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX state_item_entries_by_item ON public.state_item_entries USING btree (namespace, thread_id, uid, created_at);


--
-- Name: state_items_by_last_seen; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX state_items_by_last_seen ON public.state_items USING btree (namespace, thread_id, last_seen_at DESC);


--
-- Name: state_items_by_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX state_items_by_status ON public.state_items USING btree (namespace, thread_id, status);


--
-- Name: state_items_by_type; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX state_items_by_type ON public.state_items USING btree (namespace, thread_id, type_tag);


--
-- Name: tasks_awaiting_person; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_awaiting_person ON public.tasks USING btree (namespace, id) WHERE (status = ANY (ARRAY['TASK_STATUS_AUTH_REQUIRED'::text, 'TASK_STATUS_INPUT_REQUIRED'::text]));


--
-- Name: tasks_by_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_by_status ON public.tasks USING btree (status, updated_at);


--
-- Name: tasks_by_update; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_by_update ON public.tasks USING btree (namespace, updated_at DESC, id DESC);


--
-- Name: waits_by_namespace; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX waits_by_namespace ON public.waits USING btree (namespace, created_at, id);


--
-- Name: waits_by_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX waits_by_task ON public.waits USING btree (namespace, task_id, created_at, id);


--
-- Name: waits_claimed; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX waits_claimed ON public.waits USING btree (claimed_by) WHERE (status = 'WAIT_STATUS_WAITING'::text);


--
-- Name: waits_open; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX waits_open ON public.waits USING btree (status) WHERE (status = 'WAIT_STATUS_WAITING'::text);


--
-- Name: webhook_deliveries_by_cursor; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_by_cursor ON public.webhook_deliveries USING btree (namespace, cursor, task_id);


--
-- Name: webhook_deliveries_finished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_finished ON public.webhook_deliveries USING btree (state, namespace, last_attempt_at) WHERE (state <> 'WEBHOOK_DELIVERY_STATE_PENDING'::text);


--
-- Name: webhook_deliveries_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_pending ON public.webhook_deliveries USING btree (state) WHERE (state = 'WEBHOOK_DELIVERY_STATE_PENDING'::text);


--
-- Name: memory_entry_tags memory_entry_tag_lengths; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER memory_entry_tag_lengths BEFORE INSERT OR UPDATE ON public.memory_entry_tags FOR EACH ROW EXECUTE FUNCTION public.memory_entry_tag_lengths();


--
-- Name: memory_entries memory_postings_added; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER memory_postings_added AFTER INSERT ON public.memory_entries REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION public.memory_postings_added();


--
-- Name: memory_entries memory_postings_removed; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER memory_postings_removed AFTER DELETE ON public.memory_entries REFERENCING OLD TABLE AS old_entries FOR EACH STATEMENT EXECUTE FUNCTION public.memory_postings_removed();


--
-- Name: memory_entries memory_text_unchanged; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER memory_text_unchanged BEFORE UPDATE ON public.memory_entries FOR EACH ROW EXECUTE FUNCTION public.memory_text_unchanged();


--
-- Name: memory_embedding_queue memory_embedding_queue_seq_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_embedding_queue
    ADD CONSTRAINT memory_embedding_queue_seq_fkey FOREIGN KEY (seq) REFERENCES public.memory_entries(seq);


--
-- Name: memory_embeddings memory_embeddings_seq_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_embeddings
    ADD CONSTRAINT memory_embeddings_seq_fkey FOREIGN KEY (seq) REFERENCES public.memory_entries(seq);


--
-- Name: memory_entry_relevance memory_entry_relevance_entry_seq_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_entry_relevance
    ADD CONSTRAINT memory_entry_relevance_entry_seq_fkey FOREIGN KEY (entry_seq) REFERENCES public.memory_entries(seq);


--
-- Name: memory_entry_tags memory_entry_tags_entry_seq_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memory_entry_tags
    ADD CONSTRAINT memory_entry_tags_entry_seq_fkey FOREIGN KEY (entry_seq) REFERENCES public.memory_entries(seq);


--
-- PostgreSQL database dump complete
--

\unrestrict SGhKZZ1VXoMsNbzQHDUyG4msr7X6cfVtA2PshomVnhFePShNlMYRSHpZ4CbmXNW

