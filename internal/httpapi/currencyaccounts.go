package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/strongroom/strongroom/internal/mca"
	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// currencyAccountRecord is one currency's entry as the API shows it.
type currencyAccountRecord struct {
	Currency         string     `json:"currency"`
	State            string     `json:"state"`
	FailureNote      *string    `json:"failure_note"`
	FirstRequestedAt *time.Time `json:"first_requested_at"`
	RequestsEnabled  bool       `json:"requests_enabled"`
}

// currencyAccountList is the list's answer, a list of
// currencyAccountRecord that writes its own JSON: the list is what
// programs poll with their keys.
type currencyAccountList struct {
	Data []currencyAccountRecord `json:"data"`
}

// appendJSON appends l as encoding/json writes it (HTML characters left
// as they are), or declines when a string holds a character JSON escapes or
// a time is outside what encoding/json writes; currencyaccounts_test.go compares the two.
func (l currencyAccountList) appendJSON(b []byte) ([]byte, bool) {
	if l.Data == nil {
		return append(b, `{"data":null}`...), true
	}
	if b == nil {
		b = make([]byte, 0, 16+160*len(l.Data)) // a row with a time is about 140 bytes
	}
	b = append(b, `{"data":[`...)
	ok := true
	for i, r := range l.Data {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"currency":`...)
		b, ok = appendPlainString(b, r.Currency, ok)
		b = append(b, `,"state":`...)
		b, ok = appendPlainString(b, r.State, ok)
		b = append(b, `,"failure_note":`...)
		if r.FailureNote == nil {
			b = append(b, "null"...)
		} else {
			b, ok = appendPlainString(b, *r.FailureNote, ok)
		}
		b = append(b, `,"first_requested_at":`...)
		if r.FirstRequestedAt == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '"')
			var err error
			if b, err = r.FirstRequestedAt.AppendText(b); err != nil { // what MarshalJSON quotes
				ok = false
			}
			b = append(b, '"')
		}
		b = append(b, `,"requests_enabled":`...)
		b = strconv.AppendBool(b, r.RequestsEnabled)
		b = append(b, '}')
		if !ok {
			return b, false
		}
	}
	return append(b, "]}"...), true
}

// appendPlainString appends s quoted if it is printable ASCII without a
// quote or a backslash, which JSON writes as they are; otherwise it
// reports false. ok false passes through.
func appendPlainString(b []byte, s string, ok bool) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), ok
}

// currencyOutcomeRecord is what a request did for one currency.
type currencyOutcomeRecord struct {
	Currency string `json:"currency"`
	Result   string `json:"result"`
}

// currencyRequestRecord answers a request for currencies.
type currencyRequestRecord struct {
	Data     []currencyAccountRecord `json:"data"`
	Outcomes []currencyOutcomeRecord `json:"outcomes"`
}

func newCurrencyAccountRecord(e mca.Entry) currencyAccountRecord { return currencyAccountRecord(e) }

// The currency accounts of the organization in the path, and what a
// request for more did.
var (
	currencyAccounts = resource[[]mca.Entry, currencyAccountList]{at: organizationID,
		record: func(es []mca.Entry) currencyAccountList {
			return currencyAccountList{mapSlice(es, newCurrencyAccountRecord)}
		}}
	currencyRequests = resource[mca.Result, currencyRequestRecord]{at: organizationID, record: func(res mca.Result) currencyRequestRecord {
		return currencyRequestRecord{
			Data:     mapSlice(res.Data, newCurrencyAccountRecord),
			Outcomes: mapSlice(res.Outcomes, func(o mca.Outcome) currencyOutcomeRecord { return currencyOutcomeRecord(o) }),
		}
	}}
)

var errBadSignature = apierr.New(apierr.NotAuthenticated, "The webhook signature is missing or wrong.")

// partnerWebhook is written out: it takes the banking partner's notifications, authenticated by
// an HMAC-SHA-256 signature of the exact body; a bad signature changes nothing.
func (s *server) partnerWebhook(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if err := s.receiveWebhook(r.Context(), body, r.Header.Get("X-Partner-Signature")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// receiveWebhook checks the signature header of body and applies it; the
// sandbox helper signs its body and comes through here too.
func (s *server) receiveWebhook(ctx context.Context, body []byte, signature string) error {
	sig, ok := strings.CutPrefix(signature, "sha256=")
	given, err := hex.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(given, signWebhook(s.PartnerSecret, body)) {
		return errBadSignature
	}
	var hook mca.Webhook
	if err := decodeBytes(body, &hook); err != nil {
		return err
	}
	return s.CurrencyAccounts.Activated(ctx, hook)
}

func signWebhook(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}
