package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// AuditUsage is the usage of `strongroom audit`.
const AuditUsage = `usage: strongroom audit verify [--organization ID]

Recomputes the audit log's hash chains in the database STRONGROOM_DATABASE
names (no server needed) and prints how many entries of how many
organizations hold. When one does not, prints each broken organization's
first broken entry (its organization, id, seq, occurred_at and what differs:
its hash, or its link to the previous entry) and exits 1.

Flags:
  --organization ID   verify only this organization's chain

Exit codes: 0 every chain holds  1 a chain is broken, or the database could
not be read  2 bad command line`

// Exit codes of Audit.
const (
	auditOK     = 0
	auditBroken = 1
	auditUsage  = 2
)

// Audit runs `strongroom audit …` (args without "audit") and returns the
// process's exit code. It opens the database directly, reads only, and
// never migrates it.
func Audit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "verify" {
		if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(stdout, AuditUsage)
			return auditOK
		}
		fmt.Fprintln(stderr, AuditUsage)
		return auditUsage
	}
	fs := flag.NewFlagSet("strongroom audit verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	orgFlag := fs.String("organization", "", "verify only this organization's chain")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, AuditUsage)
			return auditOK
		}
		fmt.Fprintf(stderr, "strongroom audit verify: %v\n\n%s\n", err, AuditUsage)
		return auditUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "strongroom audit verify: unexpected argument %q\n\n%s\n", fs.Arg(0), AuditUsage)
		return auditUsage
	}
	var org uuid.UUID
	if *orgFlag != "" {
		var err error
		if org, err = uuid.Parse(*orgFlag); err != nil {
			fmt.Fprintf(stderr, "strongroom audit verify: --organization %q is not an organization id (a UUID)\n", *orgFlag)
			return auditUsage
		}
	}
	dsn := strings.TrimSpace(getenv("STRONGROOM_DATABASE"))
	if dsn == "" {
		for _, s := range settings(map[string]*string{}) {
			if s.env == "STRONGROOM_DATABASE" {
				dsn = s.def
			}
		}
	}
	d, err := db.Open(ctx, dsn)
	if err != nil {
		fmt.Fprintf(stderr, "strongroom audit verify: %v\n", err)
		return auditBroken
	}
	defer d.Close()
	rep, err := audit.Verify(ctx, d, org)
	if err != nil {
		fmt.Fprintf(stderr, "strongroom audit verify: reading the audit log: %v (is the database migrated? run strongroom migrate)\n", err)
		return auditBroken
	}
	if len(rep.Broken) > 0 {
		for _, b := range rep.Broken {
			fmt.Fprintf(stdout, "broken: %s\n", b)
		}
		fmt.Fprintf(stderr, "strongroom audit verify: %d of %d organizations' chains are broken (%d entries read)\n",
			len(rep.Broken), rep.Organizations, rep.Entries)
		return auditBroken
	}
	if org != uuid.Nil && rep.Organizations == 0 {
		fmt.Fprintf(stdout, "verified 0 entries: organization %s has no audit entries\n", org)
		return auditOK
	}
	fmt.Fprintf(stdout, "verified %d entries of %d organizations: every chain holds\n", rep.Entries, rep.Organizations)
	return auditOK
}
