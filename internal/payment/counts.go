package payment

import (
	"context"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// CountByStatus counts every organization's payments by status, for the
// metrics (one grouped pass; every status is present, 0 when none).
func CountByStatus(ctx context.Context, q db.Reader) (map[string]int64, error) {
	return countBy(ctx, q, `SELECT status, count(*) FROM payments GROUP BY status`, Statuses)
}

// CountApprovalsByStatus counts every organization's approvals by status,
// as CountByStatus does payments.
func CountApprovalsByStatus(ctx context.Context, q db.Reader) (map[string]int64, error) {
	return countBy(ctx, q, `SELECT status, count(*) FROM approvals GROUP BY status`, ApprovalStatuses)
}

func countBy(ctx context.Context, q db.Reader, query string, statuses []string) (map[string]int64, error) {
	out := make(map[string]int64, len(statuses))
	for _, s := range statuses {
		out[s] = 0
	}
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, err
		}
		out[status] = n
	}
	return out, rows.Err()
}
