package httpapi

import "github.com/strongroom/strongroom/internal/mca"

// EncodeCurrencyAccounts encodes the list's answer of entries both ways:
// as the server answers (encodeJSON, which takes the list's own appendJSON
// unless it declines), whether appendJSON took it, and as encoding/json
// writes the same record by reflection.
func EncodeCurrencyAccounts(entries []mca.Entry) (answer []byte, appended bool, reflected []byte, err error) {
	rec := currencyAccounts.record(entries)
	_, appended = rec.appendJSON(nil)
	if answer, err = encodeJSON(rec); err != nil {
		return nil, false, nil, err
	}
	reflected, err = encodeJSON(struct {
		Data []currencyAccountRecord `json:"data"`
	}(rec))
	return answer, appended, reflected, err
}
