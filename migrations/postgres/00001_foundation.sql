-- +goose Up
-- Settings the server generates once and keeps: the root secret and the sandbox token in `test`.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE organizations (
    id            UUID PRIMARY KEY,
    name          TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'active'
                  CONSTRAINT organizations_status_check CHECK (status IN ('active', 'paused', 'banned', 'deleted')),
    entity_status TEXT NOT NULL DEFAULT 'ready'
                  CONSTRAINT organizations_entity_status_check CHECK (entity_status IN ('ready', 'pending', 'rejected')),
    requires_totp BOOLEAN NOT NULL DEFAULT FALSE,
    inserted_at   TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE users (
    id               UUID PRIMARY KEY,
    email            TEXT NOT NULL,
    -- lower-cased email: sign-in is case-insensitive and emails are unique regardless of case
    email_normalized TEXT NOT NULL,
    password_hash    TEXT NOT NULL,
    first_name       TEXT,
    last_name        TEXT,
    -- TOTP seed sealed under the root secret (never stored or logged in clear)
    totp_secret      TEXT,
    totp_enabled     BOOLEAN NOT NULL DEFAULT FALSE,
    inserted_at      TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (email_normalized);

CREATE TABLE memberships (
    organization_id UUID NOT NULL REFERENCES organizations (id),
    user_id         UUID NOT NULL REFERENCES users (id),
    role            TEXT NOT NULL CONSTRAINT memberships_role_check CHECK (role IN ('owner', 'admin', 'member')),
    inserted_at     TIMESTAMPTZ NOT NULL,
    CONSTRAINT memberships_pkey PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

-- Append-only domain events, written in the transaction of the change they describe.
CREATE TABLE domain_events (
    seq          BIGINT PRIMARY KEY,
    id           UUID NOT NULL,
    stream       TEXT NOT NULL,
    aggregate_id TEXT NOT NULL,
    type         TEXT NOT NULL,
    data         TEXT NOT NULL,
    occurred_at  TIMESTAMPTZ NOT NULL,
    -- Sequence numbers are taken before commit, so a later seq can commit first.
    -- The dispatcher reads only events of transactions older than every running one.
    tx_id        XID8 NOT NULL
);
CREATE SEQUENCE domain_events_seq OWNED BY domain_events.seq;

-- The transaction id must exist before the sequence number is drawn: were the
-- number drawn first, a transaction that gets its id a moment later could be
-- overtaken by one that drew a higher number and committed in between.
-- +goose StatementBegin
CREATE FUNCTION domain_events_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.tx_id := pg_current_xact_id();
    NEW.seq := nextval('domain_events_seq');
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER domain_events_number BEFORE INSERT ON domain_events
    FOR EACH ROW EXECUTE FUNCTION domain_events_number();
CREATE UNIQUE INDEX domain_events_id_key ON domain_events (id);
CREATE INDEX domain_events_stream_idx ON domain_events (stream, seq);

-- How far each subscriber of the dispatcher has read the event table.
CREATE TABLE event_subscriptions (
    name     TEXT PRIMARY KEY,
    last_seq BIGINT NOT NULL
);

CREATE TABLE jobs (
    id           UUID PRIMARY KEY,
    kind         TEXT NOT NULL,
    payload      TEXT NOT NULL,
    status       TEXT NOT NULL CONSTRAINT jobs_status_check CHECK (status IN ('pending', 'running', 'done', 'dead')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    run_at       TIMESTAMPTZ NOT NULL,
    locked_until TIMESTAMPTZ,
    last_error   TEXT,
    inserted_at  TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX jobs_due_idx ON jobs (status, run_at);

-- Messages to people (codes, notices, alerts); a sender delivers them, the sandbox reads them.
CREATE TABLE outbox_messages (
    id           UUID PRIMARY KEY,
    user_id      UUID REFERENCES users (id),
    kind         TEXT NOT NULL CONSTRAINT outbox_messages_kind_check
                 CHECK (kind IN ('totp_activation_code', 'new_device', 'step_up_email_code', 'security_alert', 'notification')),
    channel      TEXT NOT NULL,
    subject      TEXT NOT NULL,
    body         TEXT NOT NULL,
    code         TEXT,
    inserted_at  TIMESTAMPTZ NOT NULL,
    delivered_at TIMESTAMPTZ
);
CREATE INDEX outbox_messages_user_idx ON outbox_messages (user_id, id);
