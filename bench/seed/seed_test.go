package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// A seeded database keeps the ledger's invariants, and the server runs on
// it: the heavy organization's owner signs in with the printed credentials
// and sees the seeded history.
func TestSeededDatabaseServesItsHistory(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) { testSeed(t, e.Migrated(t)) })
	}
}

func testSeed(t *testing.T, dsn string) {
	ctx := context.Background()
	const secret = "seed-test-root-secret-0123456789abcdef"
	heavy, err := Seed(ctx, Config{Database: dsn, Rows: 2000, Orgs: 20, Users: 100, Secret: secret, Password: "seeded password 0123"}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	d := dbtest.Open(t, dsn)
	if err := ledger.CheckInvariants(ctx, d.Reader()); err != nil {
		t.Fatalf("ledger invariants: %v", err)
	}
	for table, want := range map[string]int{"payments": 2000, "assurance_challenges": 2000, "transactions": 2000} {
		if n := count(t, d, table); n < want {
			t.Errorf("%s: %d rows, want at least %d", table, n, want)
		}
	}
	if heavy.Payments != 200 {
		t.Errorf("heavy organization has %d payments, want a tenth (200)", heavy.Payments)
	}
	for _, status := range []string{"pending", "satisfied", "consumed", "declined", "expired"} {
		var n int
		if err := d.Reader().QueryRowContext(ctx, `SELECT count(*) FROM assurance_challenges WHERE status = $1`, status).Scan(&n); err != nil || n == 0 {
			t.Errorf("no %s assurance challenge (%v)", status, err)
		}
	}

	s := apitest.Start(t, "STRONGROOM_DATABASE="+dsn, "STRONGROOM_SECRET="+secret)
	var step1 struct {
		ChallengeToken string `json:"challenge_token"`
	}
	s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": heavy.OwnerEmail, "password": heavy.OwnerPassword}).
		ExpectStatus(t, http.StatusOK).Decode(t, &step1)
	code, err := totp.GenerateCode(heavy.TOTPSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var session struct {
		Token string `json:"token"`
	}
	s.Post(t, "/api/v1/auth/mfa", "", map[string]any{"challenge_token": step1.ChallengeToken, "code": code}).
		ExpectStatus(t, http.StatusOK).Decode(t, &session)
	var feed struct {
		Data []struct {
			Type string `json:"type"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
	}
	s.Get(t, "/api/v1/organizations/"+heavy.OrganizationID+"/transactions?limit=100", session.Token).ExpectStatus(t, 200).Decode(t, &feed)
	if len(feed.Data) != 100 || feed.NextCursor == nil {
		t.Errorf("the heavy organization's feed shows %d rows and no next page", len(feed.Data))
	}
	var payments struct {
		PendingCount int `json:"pending_count"`
	}
	s.Get(t, "/api/v1/organizations/"+heavy.OrganizationID+"/approvals", session.Token).ExpectStatus(t, 200).Decode(t, &payments)
	if payments.PendingCount != 2 {
		t.Errorf("%d pending approvals, want 2 (one payment in a hundred awaits approval)", payments.PendingCount)
	}
	for _, p := range []string{"/balances", "/insights", "/bills", "/expenses", "/cards"} {
		s.Get(t, "/api/v1/organizations/"+heavy.OrganizationID+p, session.Token).ExpectStatus(t, 200)
	}
	// apitest checks the ledger again when the server has stopped.
}

func count(t *testing.T, d *db.DB, table string) int {
	t.Helper()
	var n int
	if err := d.Reader().QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
