package organization_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// TestAuthorizeAppliesTheOrganizationStatus is the policy of CONTRACT §2 in
// one table: membership first (not_found), then status (paused refuses
// writes, banned and deleted refuse everything), then role (forbidden).
func TestAuthorizeAppliesTheOrganizationStatus(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
		org, member := fixture.Member(t, d, now, organization.Member)
		want := func(status organization.Status, need organization.Need, typ apierr.Type) {
			t.Helper()
			_, err := organization.Authorize(ctx, d.Reader(), org.ID, member.UserID, need)
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
			if _, err := organization.SetStatus(ctx, d.Reader(), now, org.ID, tc.status); err != nil {
				t.Fatal(err)
			}
			want(tc.status, read, tc.read)
			want(tc.status, write, tc.write)
			want(tc.status, adminRead, tc.adminRead)
			// A stranger learns nothing, whatever the status.
			if _, err := organization.Authorize(ctx, d.Reader(), org.ID, uuid.Must(uuid.NewV7()), read); !apierr.Is(err, apierr.NotFound) {
				t.Errorf("%s: stranger got %v; want not_found", tc.status, err)
			}
		}
		// The lock clause works on both engines, inside a transaction.
		if _, err := organization.SetStatus(ctx, d.Reader(), now, org.ID, organization.Active); err != nil {
			t.Fatal(err)
		}
		if err := d.Tx(ctx, func(tx *sql.Tx) error {
			_, err := organization.Authorize(ctx, tx, org.ID, member.UserID, organization.Need{Write: true, Lock: d.ForUpdate()})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})
}
