package app_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/app"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// run runs a strongroom command with only the variables of env.
func run(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errw bytes.Buffer
	err = app.Run(context.Background(), args, func(k string) string { return env[k] }, &out, &errw)
	return out.String(), errw.String(), err
}

// `migrate` says how many migrations it applied and where the database is;
// `migrate status` lists each, pending then applied with its time.
func TestMigrateCountsAndStatus(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			env := map[string]string{"STRONGROOM_DATABASE": e.DSN(t)}
			out, _, err := run(t, env, "migrate", "status")
			if e.Name == "sqlite" {
				// No file yet: status says so rather than creating one.
				if err == nil || !strings.Contains(err.Error(), "no database at") {
					t.Fatalf("status of a missing SQLite file: %v, %q", err, out)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				rows := statusRows(t, out)
				for _, r := range rows {
					if r[2] != "pending" {
						t.Errorf("on an empty database: %v", r)
					}
				}
				if !strings.Contains(out, "the database is empty") {
					t.Errorf("status of an empty database does not say so:\n%s", out)
				}
			}

			out, _, err = run(t, env, "migrate")
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`^applied (\d+) migrations, now at (\d{5})\n$`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("first migrate said %q", out)
			}
			out, _, err = run(t, env, "migrate")
			if err != nil {
				t.Fatal(err)
			}
			if want := "no pending migrations, at " + m[2] + "\n"; out != want {
				t.Fatalf("second migrate said %q, want %q", out, want)
			}

			out, _, err = run(t, env, "migrate", "status")
			if err != nil {
				t.Fatal(err)
			}
			rows := statusRows(t, out)
			if n := len(rows); strconv.Itoa(n) != m[1] {
				t.Errorf("status lists %d migrations, migrate applied %s", n, m[1])
			}
			if last := rows[len(rows)-1]; last[0] != m[2] {
				t.Errorf("the last listed migration is %s, the database is at %s", last[0], m[2])
			}
			for _, r := range rows {
				if r[2] != "applied" || len(r) < 4 || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(r[3]) {
					t.Errorf("after migrating: %v", r)
				}
			}
			if !strings.HasSuffix(out, "applied, 0 pending; the database is at "+m[2]+"\n") {
				t.Errorf("status summary:\n%s", out)
			}
		})
	}
}

// statusRows are the rows of `migrate status` (version, name, state, applied at).
func statusRows(t *testing.T, out string) [][]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "VERSION") {
		t.Fatalf("migrate status:\n%s", out)
	}
	var rows [][]string
	for _, l := range lines[1 : len(lines)-1] {
		f := strings.Fields(l)
		if len(f) < 3 || !regexp.MustCompile(`^\d{5}$`).MatchString(f[0]) {
			t.Fatalf("status line %q", l)
		}
		rows = append(rows, f)
	}
	return rows
}

// On PostgreSQL backup refuses and names pg_dump with a command to run,
// without the URL's password.
func TestBackupOfPostgresPointsToPgDump(t *testing.T) {
	env := map[string]string{"STRONGROOM_DATABASE": "postgres://strongroom:s3cret-pw@db.internal:5432/bank?sslmode=require&search_path=prod"}
	_, _, err := run(t, env, "backup", filepath.Join(t.TempDir(), "copy.db"))
	if err == nil {
		t.Fatal("backup of a PostgreSQL database succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"pg_dump --format=custom", "--schema=prod", "'postgres://strongroom@db.internal:5432/bank?sslmode=require'"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "s3cret-pw") {
		t.Errorf("the message shows the password:\n%s", msg)
	}
}

// backup refuses a missing PATH, a second PATH, and an SQLite file that
// does not exist.
func TestBackupRefusals(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"STRONGROOM_DATABASE": "sqlite:" + filepath.Join(dir, "none.db")}
	for _, args := range [][]string{{"backup"}, {"backup", "a.db", "b.db"}, {"backup", filepath.Join(dir, "copy.db")}} {
		if _, _, err := run(t, env, args...); err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
	// A wrong command line is a usage error (exit 2 on the command line,
	// which also prints the help: internal/cli's help tests).
	if _, _, err := run(t, env, "backup", "--nonsense", "x.db"); !errors.As(err, new(*app.UsageError)) {
		t.Errorf("backup --nonsense: %v, want a usage error", err)
	}
}
