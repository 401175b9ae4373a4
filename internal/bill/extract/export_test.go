package extract

// Internal helpers exposed to the external test package.
var (
	FindDate   = findDate
	LastAmount = lastAmount
	MeansOf    = meansOf
)

// TextOnly reads a PDF as Read does when it carries no embedded invoice:
// its page text by the text rules, then the rules every result gets.
func TextOnly(data []byte) (Result, error) {
	res, err := readPDFText(data)
	if err == nil {
		finish(&res)
	}
	return res, err
}
