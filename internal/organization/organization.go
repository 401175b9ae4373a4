// Package organization holds organizations and their members' roles.
package organization

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Status is an organization's standing with the platform.
type Status string

// Organization statuses.
const (
	Active  Status = "active"
	Paused  Status = "paused"
	Banned  Status = "banned"
	Deleted Status = "deleted"
)

// Statuses lists every status, for validation.
var Statuses = []Status{Active, Paused, Banned, Deleted}

// EntityStatus is the state of the organization's business verification.
type EntityStatus string

// Business-verification states.
const (
	EntityReady    EntityStatus = "ready"
	EntityPending  EntityStatus = "pending"
	EntityRejected EntityStatus = "rejected"
)

// EntityStatuses lists every entity status, for validation.
var EntityStatuses = []EntityStatus{EntityReady, EntityPending, EntityRejected}

// Role is a member's role in an organization: owner > admin > member.
type Role string

// Roles, highest first.
const (
	Owner  Role = "owner"
	Admin  Role = "admin"
	Member Role = "member"
)

// Roles lists every role, for validation.
var Roles = []Role{Owner, Admin, Member}

func (r Role) rank() int {
	switch r {
	case Owner:
		return 3
	case Admin:
		return 2
	case Member:
		return 1
	}
	return 0
}

// AtLeast reports whether r is other or a higher role.
func (r Role) AtLeast(other Role) bool { return r.rank() >= other.rank() && r.rank() > 0 }

// Organization is a customer business.
type Organization struct {
	ID           uuid.UUID
	Name         string
	Status       Status
	EntityStatus EntityStatus
	// RequiresTOTP makes every member set up an authenticator app before signing in.
	RequiresTOTP bool
	InsertedAt   time.Time
	UpdatedAt    time.Time
}

var errNotFound = apierr.NotFoundf("Organization")

// Create stores a new active organization, created at tx.Now().
func Create(ctx context.Context, tx *db.Tx, name string, entity EntityStatus, requiresTOTP bool) (Organization, error) {
	now := tx.Now()
	o := Organization{ID: uuid.Must(uuid.NewV7()), Name: name, Status: Active, EntityStatus: entity,
		RequiresTOTP: requiresTOTP, InsertedAt: now, UpdatedAt: now}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO organizations (id, name, status, entity_status, requires_totp, inserted_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`,
		o.ID, o.Name, o.Status, o.EntityStatus, o.RequiresTOTP, now)
	return o, err
}

const columns = `id, name, status, entity_status, requires_totp, inserted_at, updated_at`

func scan(row interface{ Scan(...any) error }) (Organization, error) {
	var o Organization
	err := row.Scan(&o.ID, &o.Name, &o.Status, &o.EntityStatus, &o.RequiresTOTP, &o.InsertedAt, &o.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return o, errNotFound
	}
	o.InsertedAt, o.UpdatedAt = o.InsertedAt.UTC(), o.UpdatedAt.UTC()
	return o, err
}

// Get returns the organization with id, or not_found.
func Get(ctx context.Context, q db.Reader, id uuid.UUID) (Organization, error) {
	return scan(q.QueryRowContext(ctx, `SELECT `+columns+` FROM organizations WHERE id = $1`, id))
}

// Any reports whether at least one organization exists.
func Any(ctx context.Context, q db.Reader) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM organizations LIMIT 1) AS o`).Scan(&n)
	return n > 0, err
}

// StatusTopic is notified by every change of an organization's status, so
// what was read with the old one (the credentials of its API keys) is
// read again.
const StatusTopic = "organization-status"

// SetStatus changes the organization's status.
func SetStatus(ctx context.Context, tx *db.Tx, id uuid.UUID, s Status) (Organization, error) {
	tx.Notify(StatusTopic)
	return scan(tx.QueryRowContext(ctx, `UPDATE organizations SET status = $2, updated_at = $3 WHERE id = $1 RETURNING `+columns, id, s, tx.Now()))
}

// SetEntityStatus records the outcome of business verification.
func SetEntityStatus(ctx context.Context, tx *db.Tx, id uuid.UUID, s EntityStatus) (Organization, error) {
	return scan(tx.QueryRowContext(ctx, `UPDATE organizations SET entity_status = $2, updated_at = $3 WHERE id = $1 RETURNING `+columns, id, s, tx.Now()))
}

// AddMember gives userID role in orgID; a user already a member is a conflict.
func AddMember(ctx context.Context, tx *db.Tx, orgID, userID uuid.UUID, role Role) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO memberships (organization_id, user_id, role, inserted_at) VALUES ($1, $2, $3, $4)`,
		orgID, userID, role, tx.Now())
	if db.IsConstraint(err, "memberships_pkey") {
		return apierr.New(apierr.Conflict, "That person is already a member of this organization.")
	}
	return err
}

// Membership is one organization a user belongs to.
type Membership struct {
	OrganizationID   uuid.UUID
	OrganizationName string
	Role             Role
}

// Memberships lists the organizations userID belongs to, oldest membership first.
func Memberships(ctx context.Context, q db.Reader, userID uuid.UUID) ([]Membership, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT o.id, o.name, m.role FROM memberships m JOIN organizations o ON o.id = m.organization_id
		WHERE m.user_id = $1 ORDER BY m.inserted_at, o.id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Membership
	for rows.Next() {
		var m Membership
		if err := rows.Scan(&m.OrganizationID, &m.OrganizationName, &m.Role); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

var errForbidden = apierr.New(apierr.Forbidden, "Your role in this organization does not allow this.")

// ErrUnavailable is the one answer to acting on an organization that is not
// active: a session in a banned or deleted organization (any operation) or a
// paused one (an operation that writes), and an API key of an organization
// that is not active.
var ErrUnavailable = apierr.New(apierr.OrganizationUnavailable,
	"This organization is not active, so this is not available. Contact support if you think this is a mistake.")

// Need is what an organization-scoped operation asks of the person acting:
// the lowest role that may do it, and whether it writes.
type Need struct {
	// Role is the lowest role allowed; empty means any member.
	Role Role
	// Write is set for an operation that moves money, issues cards or keys,
	// or changes records: a paused organization refuses it. Reads work while
	// paused; a banned or deleted organization refuses both.
	Write bool
	// Scope is the API-key scope that lets a program do it; empty when no
	// API key may (docs/api.md, API keys).
	Scope string
	// Lock, when set to the dialect's row-lock clause (db.Tx.ForShare),
	// locks the membership and the organization for the caller's
	// transaction, so a ban or a change of role cannot slip between this
	// check and the writes that follow it.
	Lock string
}

// Allows reports whether an organization in status admits an operation
// that writes (write) or only reads.
func (s Status) Allows(write bool) bool {
	switch s {
	case Active:
		return true
	case Paused:
		return !write
	}
	return false
}

// authorize is the policy of Check for a person acting on an
// organization: membership, then the organization's status, then the role.
// A non-member gets not_found (the organization's existence is not
// revealed); a member of an organization whose status refuses the operation
// gets organization_unavailable (ErrUnavailable); a member with a lower role
// than need.Role gets forbidden.
func authorize(ctx context.Context, q db.Reader, orgID, userID uuid.UUID, need Need) (Access, error) {
	var acc Access
	err := q.QueryRowContext(ctx, `SELECT m.role, o.status FROM memberships m JOIN organizations o ON o.id = m.organization_id
		WHERE m.organization_id = $1 AND m.user_id = $2`+need.Lock, orgID, userID).Scan(&acc.Role, &acc.Status)
	if errors.Is(err, sql.ErrNoRows) {
		return Access{}, errNotFound
	}
	if err != nil {
		return Access{}, err
	}
	if !acc.Status.Allows(need.Write) {
		return acc, ErrUnavailable
	}
	if !acc.Role.AtLeast(need.min()) {
		return acc, errForbidden
	}
	return acc, nil
}

// Check is the one authorization policy of every organization-scoped
// operation, for people and programs alike:
//
//   - a person must be a member (else not_found: the organization's
//     existence is not revealed), the organization's status must admit the
//     operation (else organization_unavailable), and the role must reach
//     need.Role (else forbidden);
//   - an API key acts only where need.Scope names a scope (else
//     api_key_not_permitted), only on its own organization (else
//     not_found), only while that organization is active (else
//     organization_unavailable), only with that scope (else
//     api_scope_missing) and only up to its role (else forbidden).
//
// It returns the actor's role in the organization.
func Check(ctx context.Context, q db.Reader, a actor.Actor, orgID uuid.UUID, need Need) (Role, error) {
	acc, err := Admit(ctx, q, a, orgID, need)
	return acc.Role, err
}

// Access is what the policy found: the actor's role in the organization
// and the organization's status.
type Access struct {
	Role   Role
	Status Status
}

// Admit is Check for an operation whose answer shows the organization's
// status (the currency accounts tell whether requests are enabled): it
// returns the status the policy read with the role, saving a second read.
func Admit(ctx context.Context, q db.Reader, a actor.Actor, orgID uuid.UUID, need Need) (Access, error) {
	if a.Key == nil {
		return authorize(ctx, q, orgID, a.UserID, need)
	}
	k := a.Key
	if k.ReadsAsRole {
		return viewerAccess(ctx, q, k, orgID, need)
	}
	switch {
	case need.Scope == "":
		return Access{}, ErrKeyNotPermitted
	case k.OrganizationID != orgID:
		return Access{}, errNotFound
	}
	status := Status(k.OrganizationStatus)
	if status == "" || need.Lock != "" {
		var err error
		if status, err = StatusOf(ctx, q, orgID, need.Lock); err != nil {
			return Access{}, err
		}
	}
	acc := Access{Role: Role(k.Role), Status: status}
	switch {
	case !status.AdmitsKeys():
		return acc, ErrUnavailable
	case !k.HasScope(need.Scope):
		return acc, apierr.Newf(apierr.APIScopeMissing, "This API key lacks the %s scope.", need.Scope)
	case !acc.Role.AtLeast(need.min()):
		return acc, errForbidden
	}
	return acc, nil
}

// viewerAccess is the policy for a key rendering an event's record
// (actor.Key.ReadsAsRole): it reads, in its own organization only, what a
// person of its role may read there, and never writes.
func viewerAccess(ctx context.Context, q db.Reader, k *actor.Key, orgID uuid.UUID, need Need) (Access, error) {
	switch {
	case need.Write:
		return Access{}, ErrKeyNotPermitted
	case k.OrganizationID != orgID:
		return Access{}, errNotFound
	}
	status := Status(k.OrganizationStatus)
	if status == "" || need.Lock != "" {
		var err error
		if status, err = StatusOf(ctx, q, orgID, need.Lock); err != nil {
			return Access{}, err
		}
	}
	acc := Access{Role: Role(k.Role), Status: status}
	switch {
	case !status.Allows(false):
		return acc, ErrUnavailable
	case !acc.Role.AtLeast(need.min()):
		return acc, errForbidden
	}
	return acc, nil
}

// AdmitsKeys reports whether API keys of an organization in status may act
// at all: only while it is active. Unlike its members, a paused
// organization's keys cannot even read.
func (s Status) AdmitsKeys() bool { return s == Active }

// StatusExpr is an SQL expression for the status of the organization whose
// id is the SQL expression orgID: for another package's query that must read
// the status in the same statement (the API-key lookup, which every
// program's request makes). The SQL naming this package's table stays here.
func StatusExpr(orgID string) string {
	return `(SELECT status FROM organizations WHERE id = ` + orgID + `)`
}

// StatusOf returns the status of the organization with id, or not_found.
// lock, the dialect's row-lock clause (db.DB.ForUpdate) or empty, locks the
// organization's row for the caller's transaction, so changes to what the
// organization holds (its currency accounts) happen one at a time.
func StatusOf(ctx context.Context, q db.Reader, id uuid.UUID, lock string) (Status, error) {
	var status Status
	err := q.QueryRowContext(ctx, `SELECT status FROM organizations WHERE id = $1`+lock, id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", errNotFound
	}
	return status, err
}

// ErrKeyNotPermitted refuses an API key on an operation that takes none.
var ErrKeyNotPermitted = apierr.New(apierr.APIKeyNotPermitted, "This operation does not accept API keys; a person must sign in.")

func (n Need) min() Role {
	if n.Role == "" {
		return Member
	}
	return n.Role
}

// Hide turns the not_found of Check (the actor is not a member) into
// notFound, the answer for the object the caller asked about, so an object
// of another organization is never revealed; other errors pass unchanged.
func Hide(err, notFound error) error {
	if apierr.Is(err, apierr.NotFound) {
		return notFound
	}
	return err
}

// Own is the policy of an object that belongs to one member of an
// organization (a card's holder, an expense's creator): Check for need,
// where someone who is not a member gets notFound; then a member who is not
// the object's person gets notFound too, while owners and admins reach every
// such object. It returns the actor's role and whether they are the person.
func Own(ctx context.Context, q db.Reader, a actor.Actor, orgID uuid.UUID, person *uuid.UUID, need Need, notFound error) (Role, bool, error) {
	role, err := Check(ctx, q, a, orgID, need)
	if err != nil {
		return "", false, Hide(err, notFound)
	}
	own := person != nil && *person == a.UserID
	if !own && !role.AtLeast(Admin) {
		return "", false, notFound
	}
	return role, own, nil
}
