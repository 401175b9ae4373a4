package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// The operator's commands beside the server: migrate (and migrate status),
// backup and healthcheck. They need the database (or the address) alone,
// so they take --database (--addr) and no other setting: a backup of a
// live database from cron needs no root secret.

// settingDefault is the default of a known setting.
func settingDefault(env string) string {
	for _, s := range knownSettings {
		if s.env == env {
			return s.def
		}
	}
	return ""
}

// opsFlagSet is the flag set of an operator's command. It prints nothing:
// the command line (package cli) shows the help and the usage errors.
func opsFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("strongroom "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// OperatorFlags is the flags of an operator's command (migrate, migrate
// status, backup, healthcheck) with their built-in defaults: what their
// help and the shell completion show.
func OperatorFlags(name string) *flag.FlagSet {
	fs := opsFlagSet(name)
	none := func(string) string { return "" }
	switch name {
	case "migrate", "migrate status":
		databaseFlag(fs, none)
	case "backup":
		backupFlags(fs, none)
	case "healthcheck":
		addrFlag(fs, none)
	}
	return fs
}

// databaseFlag adds --database (and --strongroom-database), defaulting to STRONGROOM_DATABASE.
func databaseFlag(fs *flag.FlagSet, getenv func(string) string) *string {
	dsn := strings.TrimSpace(getenv("STRONGROOM_DATABASE"))
	if dsn == "" {
		dsn = settingDefault("STRONGROOM_DATABASE")
	}
	v := new(string)
	fs.StringVar(v, "database", dsn, "sqlite:PATH or a postgres:// URL ($STRONGROOM_DATABASE)")
	fs.StringVar(v, "strongroom-database", dsn, "same as --database")
	return v
}

// backupFlags adds backup's flags: --database and --force.
func backupFlags(fs *flag.FlagSet, getenv func(string) string) (dsn *string, force *bool) {
	return databaseFlag(fs, getenv), fs.Bool("force", false, "replace PATH when it exists")
}

// addrFlag adds --addr, defaulting to STRONGROOM_ADDR.
func addrFlag(fs *flag.FlagSet, getenv func(string) string) *string {
	addr := strings.TrimSpace(getenv("STRONGROOM_ADDR"))
	if addr == "" {
		addr = settingDefault("STRONGROOM_ADDR")
	}
	return fs.String("addr", addr, "the server's listen address ($STRONGROOM_ADDR)")
}

// parseInterspersed parses args with fs, flags and arguments in any order
// (backup PATH --force), and returns the arguments. A wrong flag is a
// UsageError; -h is flag.ErrHelp.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			return nil, flag.ErrHelp
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, &UsageError{Err: err}
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// versionName writes a migration version as its file does: 00039.
func versionName(v int64) string { return fmt.Sprintf("%05d", v) }

// openExisting opens dsn without migrating it; an SQLite file must exist
// already (opening would create it).
func openExisting(ctx context.Context, dsn string) (*db.DB, error) {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok && path != "" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no database at %s (STRONGROOM_DATABASE or --database names it; \"strongroom migrate\" creates it)", path)
		}
	}
	return db.Open(ctx, dsn)
}

// runMigrate is `strongroom migrate` (apply pending migrations and say how
// many) and `strongroom migrate status` (list them).
func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "status" {
		return runMigrateStatus(ctx, args[1:], getenv, stdout, stderr)
	}
	fs := opsFlagSet("migrate")
	dsn := databaseFlag(fs, getenv)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Err: fmt.Errorf("migrate: unexpected argument %q (did you mean \"migrate status\"?)", pos[0])}
	}
	d, err := db.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	r, err := d.MigrateReport(ctx)
	if err != nil {
		return err
	}
	switch n := len(r.Applied); n {
	case 0:
		fmt.Fprintf(stdout, "no pending migrations, at %s\n", versionName(r.Version))
	case 1:
		fmt.Fprintf(stdout, "applied 1 migration, now at %s\n", versionName(r.Version))
	default:
		fmt.Fprintf(stdout, "applied %d migrations, now at %s\n", n, versionName(r.Version))
	}
	return nil
}

// runMigrateStatus is `strongroom migrate status`.
func runMigrateStatus(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := opsFlagSet("migrate status")
	dsn := databaseFlag(fs, getenv)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Err: fmt.Errorf("migrate status: unexpected argument %q", pos[0])}
	}
	d, err := openExisting(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	list, err := d.Migrations(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "VERSION\tNAME\tSTATE\tAPPLIED AT")
	applied, pending, at := 0, 0, int64(0)
	for _, m := range list {
		state, when := "pending", ""
		if m.Applied {
			state = "applied"
			applied++
			at = max(at, m.Version)
			if !m.AppliedAt.IsZero() {
				when = m.AppliedAt.UTC().Format(time.RFC3339)
			}
		} else {
			pending++
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", versionName(m.Version), m.Name, state, when)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if applied == 0 {
		fmt.Fprintf(stdout, "%d pending: the database is empty; \"strongroom migrate\" or the server applies them\n", pending)
		return nil
	}
	fmt.Fprintf(stdout, "%d applied, %d pending; the database is at %s\n", applied, pending, versionName(at))
	return nil
}

// runBackup is `strongroom backup PATH`.
func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := opsFlagSet("backup")
	dsn, force := backupFlags(fs, getenv)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &UsageError{Err: errors.New("backup: want one PATH to write the copy to, as in: strongroom backup strongroom-backup.db")}
	}
	started := time.Now()
	err = db.BackupSQLite(ctx, *dsn, pos[0], *force)
	if errors.Is(err, db.ErrBackupNotSQLite) {
		return fmt.Errorf("backup copies an SQLite database, and this one is PostgreSQL: back it up with pg_dump, for example\n  %s", pgDumpExample(*dsn))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s in %s\n", strings.TrimPrefix(*dsn, "sqlite:"), pos[0], time.Since(started).Round(time.Millisecond))
	return nil
}

// pgDumpExample is a pg_dump command line for the PostgreSQL database of
// dsn: the URL without its password (pg_dump reads PGPASSWORD or
// ~/.pgpass) or the parameters only the Go driver knows, and the schema
// when the URL names one.
func pgDumpExample(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "pg_dump --format=custom --file=strongroom-$(date +%F).dump 'postgres://USER@HOST/DATABASE'"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	schema := q.Get("search_path")
	keep := url.Values{}
	for _, k := range []string{"sslmode", "sslrootcert", "connect_timeout"} {
		if v := q.Get(k); v != "" {
			keep.Set(k, v)
		}
	}
	u.RawQuery = keep.Encode()
	cmd := "pg_dump --format=custom --file=strongroom-$(date +%F).dump"
	if schema != "" {
		cmd += " --schema=" + schema
	}
	return cmd + " '" + u.String() + "'"
}

// runHealthcheck is `strongroom healthcheck`: GET /readyz of the server at
// STRONGROOM_ADDR (an unspecified host is asked on loopback), for a
// container's health check, where an image built FROM scratch has no curl.
func runHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := opsFlagSet("healthcheck")
	addr := addrFlag(fs, getenv)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Err: fmt.Errorf("healthcheck: unexpected argument %q", pos[0])}
	}
	host, port, err := net.SplitHostPort(*addr)
	if err != nil || port == "" || port == "0" {
		return fmt.Errorf("healthcheck: %q is no address with a fixed port", *addr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	target := "http://" + net.JoinHostPort(host, port) + "/readyz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", target, resp.Status)
	}
	fmt.Fprintf(stdout, "ready: %s\n", target)
	return nil
}
