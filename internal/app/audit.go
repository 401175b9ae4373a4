package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// AuditVerify recomputes the audit log's hash chains (every organization's,
// or only org's when it is not uuid.Nil) in the database dsn names (""
// for STRONGROOM_DATABASE, else its default), without a server, and writes
// what it found to stdout: how many entries of how many organizations hold,
// or each broken organization's first broken entry. It reports whether
// every chain holds. It reads only, and never migrates the database.
func AuditVerify(ctx context.Context, getenv func(string) string, dsn string, org uuid.UUID, stdout io.Writer) (bool, error) {
	if dsn = strings.TrimSpace(dsn); dsn == "" {
		dsn = strings.TrimSpace(getenv("STRONGROOM_DATABASE"))
	}
	if dsn == "" {
		for _, s := range settings(map[string]*string{}) {
			if s.env == "STRONGROOM_DATABASE" {
				dsn = s.def
			}
		}
	}
	d, err := db.Open(ctx, dsn)
	if err != nil {
		return false, err
	}
	defer d.Close()
	rep, err := audit.Verify(ctx, d, org)
	if err != nil {
		return false, fmt.Errorf("reading the audit log: %w (is the database migrated? run strongroom migrate)", err)
	}
	for _, b := range rep.Broken {
		if _, err := fmt.Fprintf(stdout, "broken: %s\n", b); err != nil {
			return false, err
		}
	}
	if len(rep.Broken) > 0 {
		_, err = fmt.Fprintf(stdout, "%d of %d organizations' chains are broken (%d entries read)\n", len(rep.Broken), rep.Organizations, rep.Entries)
		return false, err
	}
	_, err = fmt.Fprintf(stdout, "verified %d entries of %d organizations: every chain holds\n", rep.Entries, rep.Organizations)
	return true, err
}
