package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// Broken names the first entry of an organization's chain that does not
// hold: its hash is not the one its fields and the previous entry give, it
// does not follow the previous entry (one is missing), or the chain does
// not end where its head says.
type Broken struct {
	OrganizationID uuid.UUID
	// EntryID and OccurredAt are zero when the chain's end is missing
	// entries (the head names more than there are).
	EntryID    uuid.UUID
	OccurredAt time.Time
	Seq        int64
	Problem    string
}

func (b Broken) String() string {
	if b.EntryID == uuid.Nil {
		return fmt.Sprintf("organization %s: %s", b.OrganizationID, b.Problem)
	}
	return fmt.Sprintf("organization %s: entry %s (seq %d, occurred_at %s): %s",
		b.OrganizationID, b.EntryID, b.Seq, b.OccurredAt.Format(time.RFC3339Nano), b.Problem)
}

// Report is what Verify found.
type Report struct {
	Organizations int
	Entries       int64
	// Broken holds the first broken entry of each broken organization.
	Broken []Broken
}

// Verify recomputes the chain of every organization (or only of org, when
// not uuid.Nil), streaming the entries in chain order so memory does not
// grow with the log; only the chain heads (one short row per organization)
// are held. It reads through d's reader, in no transaction of the service.
func Verify(ctx context.Context, d *db.DB, org uuid.UUID) (Report, error) {
	q := d.Reader()
	heads := map[uuid.UUID]head{}
	where, args := "", []any{}
	if org != uuid.Nil {
		where, args = " WHERE organization_id = $1", []any{org}
	}
	rows, err := q.QueryContext(ctx, `SELECT organization_id, seq, hash FROM audit_chain_heads`+where, args...)
	if err != nil {
		return Report{}, err
	}
	for rows.Next() {
		var id uuid.UUID
		var h head
		if err := rows.Scan(&id, &h.seq, &h.hash); err != nil {
			rows.Close()
			return Report{}, err
		}
		heads[id] = h
	}
	if err := rows.Close(); err != nil {
		return Report{}, err
	}
	if err := rows.Err(); err != nil {
		return Report{}, err
	}

	var rep Report
	var (
		cur      uuid.UUID
		have     bool
		broken   bool
		lastSeq  int64
		lastHash string
	)
	finish := func() {
		if !have {
			return
		}
		rep.Organizations++
		h, ok := heads[cur]
		delete(heads, cur)
		if broken {
			return
		}
		switch {
		case !ok:
			rep.Broken = append(rep.Broken, Broken{OrganizationID: cur, Problem: "the chain has no head row"})
		case h.seq != lastSeq || h.hash != lastHash:
			rep.Broken = append(rep.Broken, Broken{OrganizationID: cur,
				Problem: fmt.Sprintf("the chain ends at seq %d but its head names seq %d (hash %s): entries after seq %d are missing", lastSeq, h.seq, h.hash, lastSeq)})
		}
	}
	rows, err = q.QueryContext(ctx, `SELECT `+entryColumns+` FROM audit_entries`+where+` ORDER BY organization_id, seq`, args...)
	if err != nil {
		return Report{}, err
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return Report{}, err
		}
		if !have || e.OrganizationID != cur {
			finish()
			cur, have, broken, lastSeq, lastHash = e.OrganizationID, true, false, 0, ""
		}
		rep.Entries++
		if broken {
			continue
		}
		bad := func(problem string) {
			broken = true
			rep.Broken = append(rep.Broken, Broken{OrganizationID: cur, EntryID: e.ID, OccurredAt: e.OccurredAt, Seq: e.Seq, Problem: problem})
		}
		if e.Seq != lastSeq+1 {
			bad(fmt.Sprintf("previous link: seq %d follows seq %d, so the entries between are missing", e.Seq, lastSeq))
			continue
		}
		if want := ChainHash(lastHash, e); want != e.Hash {
			bad(fmt.Sprintf("hash mismatch: stored %s, recomputed %s from its fields and the previous entry", e.Hash, want))
			continue
		}
		lastSeq, lastHash = e.Seq, e.Hash
	}
	if err := rows.Err(); err != nil {
		return Report{}, err
	}
	finish()
	for id, h := range heads { // heads with no entry at all: every entry is gone
		rep.Organizations++
		rep.Broken = append(rep.Broken, Broken{OrganizationID: id,
			Problem: fmt.Sprintf("the head names seq %d but the chain has no entries", h.seq)})
	}
	return rep, nil
}

type head struct {
	seq  int64
	hash string
}
