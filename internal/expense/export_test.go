package expense

// The rules, exposed to the external tests of this package.
var (
	Next          = next
	Editable      = editable
	Missing       = missing
	ErrIncomplete = errIncomplete
	Totals        = totals
	SearchText    = searchText
	LikePattern   = likePattern
)

// Empty reports whether r sent no field.
func (r Fields) Empty() bool { return r.empty() }

// Apply sets the fields r sent on e.
func (r Fields) Apply(e *Expense) { r.apply(e) }
