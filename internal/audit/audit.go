// Package audit keeps the audit log: every change a person, an API key or
// the sandbox makes is appended, in the transaction of the change, as an
// entry naming who acted, what they did and to what, and the request that
// carried it. Each organization's entries form a hash chain (hash =
// SHA-256(previous hash ‖ canonical entry)), so an entry changed or removed
// behind the service's back shows when the chain is verified (Verify,
// `strongroom audit verify`). Nothing here updates or deletes an entry.
//
// Domain code records with Record(ctx, tx, orgID, action, target): who
// acted and the request's id and client address travel in ctx (WithOrigin,
// set by the HTTP layer), so a feature records without knowing HTTP. Code
// that acts for someone the context does not name (a sign-in, before there
// is a session) uses RecordAs.
package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Kinds of actor.
const (
	KindUser    = "user"
	KindAPIKey  = "api_key"
	KindSandbox = "sandbox"
	KindSystem  = "system"
)

// Actor is who made a change: a person, a program through an API key, the
// sandbox's helpers (no id) or the service itself (no id).
type Actor struct {
	Kind string
	ID   *uuid.UUID
	Name string
}

// Sandbox is the actor of the sandbox helpers (the sandbox token).
var Sandbox = Actor{Kind: KindSandbox, Name: "sandbox"}

// System is the actor of a change no person or key asked for.
var System = Actor{Kind: KindSystem, Name: "system"}

// ActorOf is the audit actor of an authenticated actor: the person, or the
// API key, with the name authentication read.
func ActorOf(a actor.Actor) Actor {
	if a.Key != nil {
		id := a.Key.ID
		return Actor{Kind: KindAPIKey, ID: &id, Name: a.Name}
	}
	id := a.UserID
	return Actor{Kind: KindUser, ID: &id, Name: a.Name}
}

// User is the audit actor of person id named name.
func User(id uuid.UUID, name string) Actor { return Actor{Kind: KindUser, ID: &id, Name: name} }

// Target is what a change was made to: a record's type and id.
type Target struct {
	Type string
	ID   string
}

// To names a record of type typ by its id.
func To(typ string, id uuid.UUID) Target { return Target{Type: typ, ID: id.String()} }

// Origin is what a request tells about a change: who acts, the request's
// id and the client's address.
type Origin struct {
	Actor         Actor
	RequestID     string
	ClientAddress string
}

type originKey struct{}

// WithOrigin returns ctx carrying o for the entries recorded under it.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginOf returns the origin ctx carries; a context without one (a job, a
// command) is the service's own: actor System, no request.
func OriginOf(ctx context.Context) Origin {
	if o, ok := ctx.Value(originKey{}).(Origin); ok {
		return o
	}
	return Origin{Actor: System}
}

// Entry is one recorded change.
type Entry struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	// Seq is the entry's position in its organization's chain, from 1.
	Seq           int64
	OccurredAt    time.Time
	Actor         Actor
	Action        string
	Target        Target
	RequestID     *string
	ClientAddress *string
	// Hash is SHA-256(the previous entry's Hash ‖ Canonical()) in lower-case
	// hex; the first entry's previous hash is the empty string.
	Hash string
}

// Canonical is the text an entry's hash covers: its recorded fields as JSON
// with sorted keys (encoding/json sorts a map's keys), times in RFC 3339
// UTC with microseconds, absent values as null.
func (e Entry) Canonical() []byte {
	var actorID any
	if e.Actor.ID != nil {
		actorID = e.Actor.ID.String()
	}
	var requestID, clientAddress any
	if e.RequestID != nil {
		requestID = *e.RequestID
	}
	if e.ClientAddress != nil {
		clientAddress = *e.ClientAddress
	}
	b, err := json.Marshal(map[string]any{
		"id":              e.ID.String(),
		"organization_id": e.OrganizationID.String(),
		"seq":             e.Seq,
		"occurred_at":     e.OccurredAt.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"actor":           map[string]any{"kind": e.Actor.Kind, "id": actorID, "name": e.Actor.Name},
		"action":          e.Action,
		"target":          map[string]any{"type": e.Target.Type, "id": e.Target.ID},
		"request_id":      requestID,
		"client_address":  clientAddress,
	})
	if err != nil {
		panic(fmt.Sprintf("audit: canonical entry: %v", err)) // strings and numbers always encode
	}
	return b
}

// ChainHash is the hash of e following the entry whose hash is previous.
func ChainHash(previous string, e Entry) string {
	h := sha256.New()
	h.Write([]byte(previous))
	h.Write(e.Canonical())
	return hex.EncodeToString(h.Sum(nil))
}

// Record appends an entry to orgID's audit log in tx, the transaction of
// the change it records, so the entry exists if and only if the change
// commits. The actor, request id and client address come from ctx
// (WithOrigin). The entry is appended as tx commits (appendQueued): taking
// the organization's chain head makes every other transaction of the
// organization that records wait until tx ends, so it is taken last,
// whenever Record was called.
func Record(ctx context.Context, tx *db.Tx, orgID uuid.UUID, action string, target Target) error {
	o := OriginOf(ctx)
	return record(ctx, tx, orgID, o.Actor, o, action, target)
}

// RecordAs is Record for a change made by who, whatever ctx names (a
// sign-in: the person has no session yet).
func RecordAs(ctx context.Context, tx *db.Tx, orgID uuid.UUID, who Actor, action string, target Target) error {
	return record(ctx, tx, orgID, who, OriginOf(ctx), action, target)
}

// RecordEach is RecordAs in each of orgs (once each), for a change that
// concerns a person in every organization they belong to (a sign-in, a
// step-up).
func RecordEach(ctx context.Context, tx *db.Tx, orgs []uuid.UUID, who Actor, action string, target Target) error {
	orgs = slices.Clone(orgs)
	slices.SortFunc(orgs, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	for i, org := range orgs {
		if i > 0 && org == orgs[i-1] {
			continue
		}
		if err := RecordAs(ctx, tx, org, who, action, target); err != nil {
			return err
		}
	}
	return nil
}

// RecordForPerson is RecordEach in every organization userID belongs to:
// a change to a person's own access (a sign-in, a step-up, an
// authenticator, a sign-out) belongs to no one organization, and each of
// theirs sees it.
func RecordForPerson(ctx context.Context, tx *db.Tx, userID uuid.UUID, who Actor, action string, target Target) error {
	ms, err := organization.Memberships(ctx, tx, userID)
	if err != nil {
		return err
	}
	orgs := make([]uuid.UUID, len(ms))
	for i, m := range ms {
		orgs[i] = m.OrganizationID
	}
	return RecordEach(ctx, tx, orgs, who, action, target)
}

func record(ctx context.Context, tx *db.Tx, orgID uuid.UUID, who Actor, o Origin, action string, target Target) error {
	if !known(action) {
		return fmt.Errorf("audit: unknown action %q", action)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	e := Entry{ID: id, OrganizationID: orgID, OccurredAt: tx.Now().UTC().Truncate(time.Microsecond),
		Actor: who, Action: action, Target: target}
	if o.RequestID != "" {
		e.RequestID = &o.RequestID
	}
	if o.ClientAddress != "" {
		e.ClientAddress = &o.ClientAddress
	}
	tx.QueueAtCommit("audit", e, appendQueued)
	return nil
}

// appendQueued appends the entries a transaction recorded, as it commits.
// The head row serializes an organization's appends: the upsert locks it
// (PostgreSQL) until the transaction ends, so it is taken last, and every
// organization's in one pass in the order of their ids, so two
// transactions recording in several organizations (a person's sign-in)
// wait for each other instead of deadlocking. On PostgreSQL an entry costs
// one statement (appendHashedInDatabase), on SQLite an organization's
// entries three.
func appendQueued(ctx context.Context, tx *db.Tx, items []any) error {
	byOrg := map[uuid.UUID][]Entry{}
	var orgs []uuid.UUID
	for _, it := range items {
		e := it.(Entry)
		if byOrg[e.OrganizationID] == nil {
			orgs = append(orgs, e.OrganizationID)
		}
		byOrg[e.OrganizationID] = append(byOrg[e.OrganizationID], e)
	}
	slices.SortFunc(orgs, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	for _, org := range orgs {
		if err := appendChain(ctx, tx, org, byOrg[org]); err != nil {
			return err
		}
	}
	return nil
}

// appendChain appends entries, in order, to org's chain.
func appendChain(ctx context.Context, tx *db.Tx, org uuid.UUID, entries []Entry) error {
	if tx.Dialect() == db.Postgres {
		for _, e := range entries {
			if err := appendHashedInDatabase(ctx, tx, e); err != nil {
				return fmt.Errorf("audit: append: %w", err)
			}
		}
		return nil
	}
	// The upsert returns the new last seq and the hash of the entry before
	// the first of these ('' for a chain's first).
	var last int64
	var previous string
	err := tx.QueryRowContext(ctx, `
		INSERT INTO audit_chain_heads (organization_id, seq, hash) VALUES ($1, $2, '')
		ON CONFLICT (organization_id) DO UPDATE SET seq = audit_chain_heads.seq + excluded.seq
		RETURNING seq, hash`, org, len(entries)).Scan(&last, &previous)
	if err != nil {
		return fmt.Errorf("audit: chain head: %w", err)
	}
	var values strings.Builder
	args := []any{org}
	for i := range entries {
		e := &entries[i]
		e.Seq = last - int64(len(entries)-1-i)
		e.Hash = ChainHash(previous, *e)
		previous = e.Hash
		if i > 0 {
			values.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&values, "($%d, $1, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)",
			n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8, n+9, n+10, n+11, n+12)
		args = append(args, e.ID, e.Seq, e.OccurredAt, e.Actor.Kind, nullUUID(e.Actor.ID), e.Actor.Name, e.Action,
			e.Target.Type, e.Target.ID, e.RequestID, e.ClientAddress, e.Hash)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit_entries (id, organization_id, seq, occurred_at, actor_kind, actor_id,
		actor_name, action, target_type, target_id, request_id, client_address, hash) VALUES `+values.String(), args...); err != nil {
		return fmt.Errorf("audit: append: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE audit_chain_heads SET hash = $2 WHERE organization_id = $1`, org, previous); err != nil {
		return fmt.Errorf("audit: chain head: %w", err)
	}
	return nil
}

// seqMark stands for the seq in an entry's canonical text while the
// database has yet to give it one.
const seqMark = math.MinInt64

// appendHashedInDatabase appends e with one statement on PostgreSQL, which
// holds the organization's chain head from it to the commit: the head row
// takes the next seq and the new hash, computed by the database the way
// ChainHash computes it (hex SHA-256 of the previous hash followed by the
// canonical text, the seq written into it), and the entry is inserted
// with both.
func appendHashedInDatabase(ctx context.Context, tx *db.Tx, e Entry) error {
	e.Seq = seqMark
	canonical := e.Canonical()
	mark := []byte(`"seq":` + strconv.FormatInt(seqMark, 10))
	at := bytes.Index(canonical, mark)
	if at < 0 {
		return fmt.Errorf("no seq in the canonical text")
	}
	before, after := string(canonical[:at])+`"seq":`, string(canonical[at+len(mark):])
	_, err := tx.ExecContext(ctx, `WITH head AS (
			INSERT INTO audit_chain_heads AS h (organization_id, seq, hash)
			VALUES ($2, 1, encode(sha256(convert_to($12::text || '1' || $13::text, 'UTF8')), 'hex'))
			ON CONFLICT (organization_id) DO UPDATE SET seq = h.seq + 1,
				hash = encode(sha256(convert_to(h.hash || $12::text || (h.seq + 1)::text || $13::text, 'UTF8')), 'hex')
			RETURNING seq, hash)
		INSERT INTO audit_entries (id, organization_id, seq, occurred_at, actor_kind, actor_id, actor_name, action,
			target_type, target_id, request_id, client_address, hash)
		SELECT $1, $2, head.seq, $3, $4, $5, $6, $7, $8, $9, $10, $11, head.hash FROM head`,
		e.ID, e.OrganizationID, e.OccurredAt, e.Actor.Kind, nullUUID(e.Actor.ID), e.Actor.Name, e.Action,
		e.Target.Type, e.Target.ID, e.RequestID, e.ClientAddress, before, after)
	return err
}

func nullUUID(id *uuid.UUID) uuid.NullUUID {
	if id == nil {
		return uuid.NullUUID{}
	}
	return uuid.NullUUID{UUID: *id, Valid: true}
}
