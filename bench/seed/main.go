// Command seed fills a Strongroom database with history, so that benchmarks
// and query plans can be judged on a database that has been in use for a
// while rather than on an empty one:
//
//	go run ./bench/seed -database sqlite:/tmp/seed-1m.db -rows 1000000
//	go run ./bench/seed -database postgres://app@127.0.0.1:54329/strongroom_seed?sslmode=disable -rows 1000000
//
// It migrates the database, then writes -rows payments (with their quotes,
// approvals, ledger entries and feed rows), as many assurance challenges
// (with their step-ups and sudo sessions, in every status), feed rows, and
// a share of sessions, idempotency records, domain events, finished jobs,
// cards and their authorizations, bills and expenses, spread over -orgs
// organizations and -users users over the two years before now. The ledger
// stays balanced and the day sums equal the feed, so the server's invariant
// checks hold. One organization, the heavy one, carries a tenth of the
// history; its owner's credentials are printed and written to -out, so that
// a benchmark can act as that person. Every seeded user has the same
// password and authenticator secret; the server must run with the same
// -secret (STRONGROOM_SECRET) to read that secret.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// DefaultSecret is the root secret of bench/load's servers.
const DefaultSecret = "load-tool-root-secret-0123456789abcdef"

func main() {
	cfg := Config{}
	flag.StringVar(&cfg.Database, "database", "", "sqlite:PATH or a postgres:// URL (migrated first)")
	flag.IntVar(&cfg.Rows, "rows", 1_000_000, "payments, assurance challenges and (at least) feed rows to write")
	flag.IntVar(&cfg.Orgs, "orgs", 200, "organizations")
	flag.IntVar(&cfg.Users, "users", 2000, "users, spread over the organizations")
	flag.StringVar(&cfg.Secret, "secret", DefaultSecret, "STRONGROOM_SECRET of the server that will read the database")
	flag.StringVar(&cfg.Password, "password", "seeded password 0123", "password of every seeded user")
	flag.StringVar(&cfg.Out, "out", "", "write the heavy organization's id and owner credentials to this JSON file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "seed:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if cfg.Database == "" {
		fmt.Fprintln(os.Stderr, "seed: -database is required")
		os.Exit(2)
	}
	start := time.Now()
	heavy, err := Seed(context.Background(), cfg, func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%6.1fs  "+format+"\n", append([]any{time.Since(start).Seconds()}, args...)...)
	})
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
	out, _ := json.MarshalIndent(heavy, "", "  ")
	fmt.Println(string(out))
	if cfg.Out != "" {
		if err := os.WriteFile(cfg.Out, append(out, '\n'), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "seed:", err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "seeded in %v\n", time.Since(start).Round(time.Second))
}

// Config says what to seed.
type Config struct {
	Database          string
	Rows, Orgs, Users int
	Secret, Password  string
	Out               string
	// Now is the end of the history (the current time when zero).
	Now time.Time
}

// Heavy is the organization carrying a tenth of the history, and how to act as its owner.
type Heavy struct {
	OrganizationID string `json:"organization_id"`
	OwnerEmail     string `json:"owner_email"`
	OwnerPassword  string `json:"owner_password"`
	TOTPSecret     string `json:"totp_secret"`
	Payments       int    `json:"payments"`
	Secret         string `json:"strongroom_secret"`
}

// Seed migrates cfg.Database and writes the history; logf reports progress.
func Seed(ctx context.Context, cfg Config, logf func(string, ...any)) (Heavy, error) {
	if cfg.Orgs < 2 || cfg.Users < cfg.Orgs || cfg.Rows < cfg.Orgs {
		return Heavy{}, fmt.Errorf("need at least 2 organizations, a user per organization and a row per organization")
	}
	if cfg.Now.IsZero() {
		cfg.Now = time.Now().UTC().Truncate(time.Second)
	}
	keys, err := keyring.New([]byte(cfg.Secret))
	if err != nil {
		return Heavy{}, err
	}
	// The one transaction the seed runs through the real code (the heavy
	// organization and its owner) happens when the history begins.
	d, err := db.Open(ctx, cfg.Database, db.WithClock(clock.NewManual(cfg.Now.Add(-history))))
	if err != nil {
		return Heavy{}, err
	}
	defer d.Close()
	if err := d.Migrate(ctx); err != nil {
		return Heavy{}, err
	}
	var empty bool
	if err := d.Reader().QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM organizations)`).Scan(&empty); err != nil {
		return Heavy{}, err
	}
	if !empty {
		return Heavy{}, fmt.Errorf("the database already holds organizations: seed an empty one")
	}
	g := &generator{cfg: cfg, keys: keys, logf: logf}
	return g.run(ctx, d)
}
