package organization_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// TestAuthorizeAppliesTheOrganizationStatus is the policy of docs/api.md,
// Authentication, in one table: membership first (not_found), then status (paused refuses
// writes, banned and deleted refuse everything), then role (forbidden).
func TestAuthorizeAppliesTheOrganizationStatus(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		org, member := fixture.Member(t, d, organization.Member)
		want := func(status organization.Status, need organization.Need, typ apierr.Type) {
			t.Helper()
			_, err := organization.Check(ctx, d.Reader(), member, org.ID, need)
			switch {
			case typ == "" && err != nil:
				t.Errorf("%s %+v: %v; want allowed", status, need, err)
			case typ != "" && !apierr.Is(err, typ):
				t.Errorf("%s %+v: %v; want %s", status, need, err, typ)
			}
		}
		read, write := organization.Need{}, organization.Need{Write: true}
		adminRead := organization.Need{Role: organization.Admin}
		for _, tc := range []struct {
			status                 organization.Status
			read, write, adminRead apierr.Type
		}{
			{organization.Active, "", "", apierr.Forbidden},
			{organization.Paused, "", apierr.OrganizationUnavailable, apierr.Forbidden},
			{organization.Banned, apierr.OrganizationUnavailable, apierr.OrganizationUnavailable, apierr.OrganizationUnavailable},
			{organization.Deleted, apierr.OrganizationUnavailable, apierr.OrganizationUnavailable, apierr.OrganizationUnavailable},
		} {
			if _, err := setStatus(ctx, d, org.ID, tc.status); err != nil {
				t.Fatal(err)
			}
			want(tc.status, read, tc.read)
			want(tc.status, write, tc.write)
			want(tc.status, adminRead, tc.adminRead)
			// A stranger learns nothing, whatever the status.
			if _, err := organization.Check(ctx, d.Reader(), actor.Actor{UserID: uuid.Must(uuid.NewV7())}, org.ID, read); !apierr.Is(err, apierr.NotFound) {
				t.Errorf("%s: stranger got %v; want not_found", tc.status, err)
			}
		}
		// The lock clause works on both engines, inside a transaction.
		if _, err := setStatus(ctx, d, org.ID, organization.Active); err != nil {
			t.Fatal(err)
		}
		if err := d.Tx(ctx, func(tx *db.Tx) error {
			_, err := organization.Check(ctx, tx, member, org.ID, organization.Need{Write: true, Lock: d.ForUpdate()})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCheckAppliesTheKeyRules: an API key acts only where the operation
// names a scope, on its own organization, while it is active, with that
// scope and up to its role (docs/api.md, API keys).
func TestCheckAppliesTheKeyRules(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		org, _ := fixture.Member(t, d, organization.Owner)
		key := func(orgID uuid.UUID, role string, scopes ...string) actor.Actor {
			return actor.Actor{Key: &actor.Key{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, Lookup: "abcdefgh", Role: role, Scopes: scopes}}
		}
		balances := organization.Need{Scope: "balances:read"}
		for _, tc := range []struct {
			name string
			a    actor.Actor
			need organization.Need
			want apierr.Type
		}{
			{"scoped read", key(org.ID, "member", "balances:read"), balances, ""},
			{"operation without a scope", key(org.ID, "admin", "balances:read"), organization.Need{}, apierr.APIKeyNotPermitted},
			{"another organization's key", key(uuid.Must(uuid.NewV7()), "member", "balances:read"), balances, apierr.NotFound},
			{"scope missing", key(org.ID, "member", "events:read"), balances, apierr.APIScopeMissing},
			{"role too low", key(org.ID, "member", "balances:read"), organization.Need{Scope: "balances:read", Role: organization.Admin}, apierr.Forbidden},
		} {
			_, err := organization.Check(ctx, d.Reader(), tc.a, org.ID, tc.need)
			if (tc.want == "" && err != nil) || (tc.want != "" && !apierr.Is(err, tc.want)) {
				t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
			}
		}
		// Any status but active stops keys, reads included.
		for _, st := range []organization.Status{organization.Paused, organization.Banned, organization.Deleted} {
			if _, err := setStatus(ctx, d, org.ID, st); err != nil {
				t.Fatal(err)
			}
			if _, err := organization.Check(ctx, d.Reader(), key(org.ID, "member", "balances:read"), org.ID, balances); !apierr.Is(err, apierr.OrganizationUnavailable) {
				t.Errorf("%s: %v; want organization_unavailable", st, err)
			}
		}
	})
}

// TestEventViewersReadAsTheirRole: a key rendering an event's record
// (actor.Key.ReadsAsRole) reads what a person of its role may, whether or
// not the record's operation takes keys, in its own organization only, and
// never writes; the organization's owners' view reads while it is paused.
func TestEventViewersReadAsTheirRole(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		org, _ := fixture.Member(t, d, organization.Owner)
		member := actor.Actor{Key: &actor.Key{ID: uuid.Must(uuid.NewV7()), OrganizationID: org.ID, Role: "member", Scopes: []string{"events:read"}}}
		for _, tc := range []struct {
			name string
			a    actor.Actor
			org  uuid.UUID
			need organization.Need
			want apierr.Type
		}{
			{"a person's read", member.AsViewer(), org.ID, organization.Need{}, ""},
			{"the same key, not viewing", member, org.ID, organization.Need{}, apierr.APIKeyNotPermitted},
			{"above its role", member.AsViewer(), org.ID, organization.Need{Role: organization.Admin}, apierr.Forbidden},
			{"a write", member.AsViewer(), org.ID, organization.Need{Write: true}, apierr.APIKeyNotPermitted},
			{"another organization", member.AsViewer(), uuid.Must(uuid.NewV7()), organization.Need{}, apierr.NotFound},
			{"the owners' view", actor.OrganizationViewer(org.ID), org.ID, organization.Need{Role: organization.Owner}, ""},
		} {
			role, err := organization.Check(ctx, d.Reader(), tc.a, tc.org, tc.need)
			if (tc.want == "" && err != nil) || (tc.want != "" && !apierr.Is(err, tc.want)) {
				t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
			}
			if tc.want == "" && string(role) != tc.a.Key.Role {
				t.Errorf("%s: role %s, want %s", tc.name, role, tc.a.Key.Role)
			}
		}
		if _, err := setStatus(ctx, d, org.ID, organization.Paused); err != nil {
			t.Fatal(err)
		}
		if _, err := organization.Check(ctx, d.Reader(), actor.OrganizationViewer(org.ID), org.ID, organization.Need{}); err != nil {
			t.Errorf("owners' view of a paused organization: %v", err)
		}
		if _, err := setStatus(ctx, d, org.ID, organization.Banned); err != nil {
			t.Fatal(err)
		}
		if _, err := organization.Check(ctx, d.Reader(), actor.OrganizationViewer(org.ID), org.ID, organization.Need{}); !apierr.Is(err, apierr.OrganizationUnavailable) {
			t.Errorf("owners' view of a banned organization: %v; want organization_unavailable", err)
		}
	})
}

// TestRoleAtLeast is the order of roles: owner > admin > member; a role
// that is none of them reaches nothing, not even member (and a role needed
// is never one: Need.Role empty means member).
func TestRoleAtLeast(t *testing.T) {
	roles := []organization.Role{organization.Owner, organization.Admin, organization.Member, "stranger"}
	want := [][]bool{
		// owner, admin, member, stranger (as the role needed)
		{true, true, true, true},   // owner
		{false, true, true, true},  // admin
		{false, false, true, true}, // member
		{false, false, false, false},
	}
	for i, r := range roles {
		for j, other := range roles {
			if got := r.AtLeast(other); got != want[i][j] {
				t.Errorf("%s.AtLeast(%s) = %v; want %v", r, other, got, want[i][j])
			}
		}
	}
}

// TestStatusAllows is the status rule for people (reads and writes) and for API
// keys, which act only while the organization is active.
func TestStatusAllows(t *testing.T) {
	for _, tc := range []struct {
		status            organization.Status
		read, write, keys bool
	}{
		{organization.Active, true, true, true},
		{organization.Paused, true, false, false},
		{organization.Banned, false, false, false},
		{organization.Deleted, false, false, false},
		{"unknown", false, false, false},
	} {
		if got := tc.status.Allows(false); got != tc.read {
			t.Errorf("%s allows reads = %v; want %v", tc.status, got, tc.read)
		}
		if got := tc.status.Allows(true); got != tc.write {
			t.Errorf("%s allows writes = %v; want %v", tc.status, got, tc.write)
		}
		if got := tc.status.AdmitsKeys(); got != tc.keys {
			t.Errorf("%s admits keys = %v; want %v", tc.status, got, tc.keys)
		}
	}
}

// TestAdmitReturnsTheStatus: Admit hands back the status it read with the
// role (what the currency accounts show), StatusOf and StatusExpr (inside
// another package's statement) read it alone, keys are admitted only while
// it is active, and an unknown organization is not found.
func TestAdmitReturnsTheStatus(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		org, admin := fixture.Member(t, d, organization.Admin)
		if _, err := setStatus(ctx, d, org.ID, organization.Paused); err != nil {
			t.Fatal(err)
		}
		acc, err := organization.Admit(ctx, d.Reader(), admin, org.ID, organization.Need{})
		if err != nil || acc != (organization.Access{Role: organization.Admin, Status: organization.Paused}) {
			t.Errorf("admit = %+v, %v; want admin in a paused organization", acc, err)
		}
		if s, err := organization.StatusOf(ctx, d.Reader(), org.ID, ""); err != nil || s != organization.Paused {
			t.Errorf("status = %q, %v; want paused", s, err)
		}
		var inline organization.Status
		if err := d.Reader().QueryRowContext(ctx, `SELECT `+organization.StatusExpr("$1"), org.ID).Scan(&inline); err != nil || inline != organization.Paused {
			t.Errorf("status read inline = %q, %v; want paused", inline, err)
		}
		if inline.AdmitsKeys() || !organization.Active.AdmitsKeys() {
			t.Error("keys must act only while the organization is active")
		}
		unknown := uuid.Must(uuid.NewV7())
		if _, err := organization.StatusOf(ctx, d.Reader(), unknown, ""); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("status of an unknown organization: %v; want not_found", err)
		}
	})
}

// setStatus changes the organization's status in a transaction of its own.
func setStatus(ctx context.Context, d *db.DB, id uuid.UUID, s organization.Status) (organization.Organization, error) {
	return db.InTx(ctx, d, func(tx *db.Tx) (organization.Organization, error) {
		return organization.SetStatus(ctx, tx, id, s)
	})
}
