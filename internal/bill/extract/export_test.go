package extract

// Internal helpers exposed to the external test package.
var (
	FindDate   = findDate
	LastAmount = lastAmount
	MeansOf    = meansOf
)
