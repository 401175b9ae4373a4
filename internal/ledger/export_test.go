package ledger

import (
	"fmt"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// DailySumsSQL is the query DailySums runs on dialect, for the test that
// reads its plan.
func DailySumsSQL(dialect db.Dialect) string {
	e := dayExpr[dialect]
	return fmt.Sprintf(daySumsSQL, e[0], e[1])
}
