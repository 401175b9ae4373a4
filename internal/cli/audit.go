package cli

import (
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/app"
)

// auditCommand is `strongroom audit verify`, a server command: it reads the
// database directly, as migrate does.
var auditCommand = &command{name: "audit", section: sectionServer, summary: "check the audit log in the database (no server needed)", subs: []*command{
	{name: "verify", summary: "recompute the audit log's hash chains; exit 1 naming the first broken entry",
		run: cmdAuditVerify, example: "strongroom audit verify\nSTRONGROOM_DATABASE='postgres://app@127.0.0.1:5432/strongroom' strongroom audit verify --organization 0190f5c9-6f70-7b81-8d9e-0f1a2b3c4d60",
		notes: "It prints how many entries of how many organizations it verified. A broken chain is named by its\n" +
			"organization and first broken entry (id, seq, occurred_at) and what differs: the entry's hash, its\n" +
			"link to the previous entry (one is missing), or the chain's end (docs/api.md, Audit log)."},
}}

func cmdAuditVerify(e *env, args []string) error {
	fs := e.flags("audit verify", "audit verify [--organization ID] [--database URL]")
	org := fs.String("organization", "", "verify only the chain of the organization with this `id`")
	dsn := fs.String("database", "", "the `database`: sqlite:PATH or a postgres:// URL (default $STRONGROOM_DATABASE, else sqlite:strongroom.db)")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageHelpf("audit verify takes no arguments")
	}
	var id uuid.UUID
	if *org != "" {
		if id, err = uuid.Parse(*org); err != nil {
			return usageHelpf("--organization %q is not an organization id (a UUID)", *org)
		}
	}
	ok, err := app.AuditVerify(e.ctx, e.getenv, *dsn, id, e.out)
	if err != nil {
		return &exitError{ExitError, err.Error()}
	}
	if !ok {
		return &exitError{ExitError, "the audit log's chain is broken"}
	}
	return nil
}
