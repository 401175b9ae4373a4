package httpapi

import "github.com/strongroom/strongroom/internal/mca"

// EncodeCurrencyAccounts encodes the list's answer of entries as the server
// answers (encodeJSON, which takes the list's own appendJSON unless it
// declines), and says whether appendJSON took it.
func EncodeCurrencyAccounts(entries []mca.Entry) (answer []byte, appended bool, err error) {
	rec := currencyAccounts.record(entries)
	_, appended = rec.appendJSON(nil)
	answer, err = encodeJSON(rec)
	return answer, appended, err
}

// ReflectCurrencyAccounts encodes the same record by encoding/json's
// reflection alone.
func ReflectCurrencyAccounts(entries []mca.Entry) ([]byte, error) {
	return encodeJSON(struct {
		Data []currencyAccountRecord `json:"data"`
	}(currencyAccounts.record(entries)))
}
