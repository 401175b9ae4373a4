package e2e_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// Physical cards (docs/api.md, Cards): ordering with a shipping
// address, shipping in the sandbox, activation by the cardholder with the
// 6-digit code of the card's letter (guesses limited per person), and
// setting a PIN behind a step-up.

func shippingAddress() map[string]any {
	return map[string]any{"address_line1": "Friedrichstraße 68", "address_line2": "3. OG", "city": "Berlin",
		"postal_code": "10117", "state": "Berlin", "country_code": "DE"}
}

func orderPhysical(t *testing.T, s *apitest.Server, token, cardID string) *apitest.Response {
	t.Helper()
	return s.Post(t, cardPath(cardID, "physical"), token, map[string]any{"shipping_address": shippingAddress()})
}

func activate(t *testing.T, s *apitest.Server, token, cardID, code string) *apitest.Response {
	t.Helper()
	return s.Post(t, cardPath(cardID, "activate"), token, map[string]any{"activation_code": code})
}

var activationCodeShape = regexp.MustCompile(`^[0-9]{6}$`)

// shipCard ships cardID's ordered physical card in the sandbox and returns
// the code of its letter.
func shipCard(t *testing.T, s *apitest.Server, cardID string) string {
	t.Helper()
	var got api.SandboxShippedCard
	s.Post(t, "/api/v1/sandbox/cards/"+cardID+"/ship", sbx, nil).ExpectStatus(t, 200).Decode(t, &got)
	if got.Card.Id.String() != cardID || got.Card.Physical.State != "awaiting_activation" || !activationCodeShape.MatchString(got.ActivationCode) {
		t.Fatalf("shipped: %+v", got)
	}
	return got.ActivationCode
}

// orderAndShip orders cardID's physical card as token and ships it,
// returning the activation code.
func orderAndShip(t *testing.T, s *apitest.Server, token, cardID string) string {
	t.Helper()
	orderPhysical(t, s, token, cardID).ExpectStatus(t, 200)
	return shipCard(t, s, cardID)
}

// expectInvalidFieldOneOf fails t unless r is 400 invalid_request naming one of fields.
func expectInvalidFieldOneOf(t *testing.T, r *apitest.Response, fields ...string) {
	t.Helper()
	e := r.ExpectError(t, http.StatusBadRequest, "invalid_request")
	for _, d := range e.Error.Details {
		for _, f := range fields {
			if d.Field == f {
				return
			}
		}
	}
	t.Fatalf("details %+v do not name %q", e.Error.Details, fields[0])
}

// otherDigits is as many digits as code, each of them different.
func otherDigits(code string) string {
	b := []byte(code)
	for i := range b {
		b[i] = '0' + (b[i]-'0'+1)%10
	}
	return string(b)
}

func TestOrderingShippingAndActivatingAPhysicalCard(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	c := cardFor(t, s, o.id, o.alice.id, 1000)
	virtualOnly := issueCard(t, s, o.id, map[string]any{"user_id": o.alice.id, "monthly_limit": 100, "allow_physical": false})
	inactive := cardFor(t, s, o.id, o.alice.id, 100)
	setCardStatus(t, s, inactive.Id.String(), "inactive")
	orgCard := issueCard(t, s, o.id, map[string]any{"monthly_limit": 100, "card_holder_name": "Acme Operations"})

	expectActions(t, "cardholder, no physical card", getCard(t, s, o.alice.token, c.Id.String()), "order_physical", "freeze")
	expectActions(t, "owner, no physical card", getCard(t, s, o.owner.token, c.Id.String()), "order_physical", "freeze")
	expectActions(t, "no physical allowed", getCard(t, s, o.alice.token, virtualOnly.Id.String()), "freeze")

	// A bad shipping address is refused, naming the field.
	line := func(k string, v any) map[string]any {
		a := shippingAddress()
		if v == nil {
			delete(a, k)
		} else {
			a[k] = v
		}
		return map[string]any{"shipping_address": a}
	}
	for _, bad := range []struct {
		name  string
		body  any
		field string
	}{
		{"no address", map[string]any{}, "shipping_address"},
		{"no first line", line("address_line1", nil), "shipping_address.address_line1"},
		{"empty first line", line("address_line1", ""), "shipping_address.address_line1"},
		{"long first line", line("address_line1", strings.Repeat("a", 201)), "shipping_address.address_line1"},
		{"long second line", line("address_line2", strings.Repeat("a", 201)), "shipping_address.address_line2"},
		{"no city", line("city", nil), "shipping_address.city"},
		{"long city", line("city", strings.Repeat("c", 101)), "shipping_address.city"},
		{"empty postal code", line("postal_code", ""), "shipping_address.postal_code"},
		{"long postal code", line("postal_code", strings.Repeat("1", 21)), "shipping_address.postal_code"},
		{"long state", line("state", strings.Repeat("s", 101)), "shipping_address.state"},
		{"no country", line("country_code", nil), "shipping_address.country_code"},
		{"lower-case country", line("country_code", "de"), "shipping_address.country_code"},
		{"three-letter country", line("country_code", "DEU"), "shipping_address.country_code"},
		{"unknown address field", line("planet", "Earth"), "shipping_address.planet"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			r := s.Post(t, cardPath(c.Id.String(), "physical"), o.alice.token, bad.body)
			// An unknown field may be named bare, as the decoder names unknown nested fields.
			expectInvalidFieldOneOf(t, r, bad.field, strings.TrimPrefix(bad.field, "shipping_address."))
		})
	}
	if got := getCard(t, s, o.alice.token, c.Id.String()); got.Physical.State != "none" {
		t.Fatalf("a refused order changed the card: %+v", got.Physical)
	}

	// Only a card that allows it, has none yet and is active can be ordered.
	orderPhysical(t, s, o.alice.token, virtualOnly.Id.String()).ExpectError(t, 409, "conflict")
	orderPhysical(t, s, o.owner.token, inactive.Id.String()).ExpectError(t, 409, "conflict")
	orderPhysical(t, s, o.bob.token, c.Id.String()).ExpectError(t, 404, "not_found")
	// Nothing to ship or activate yet.
	s.Post(t, "/api/v1/sandbox/cards/"+c.Id.String()+"/ship", sbx, nil).ExpectError(t, 409, "conflict")
	activate(t, s, o.alice.token, c.Id.String(), "482913").ExpectError(t, 409, "conflict")

	var ordered api.Card
	orderPhysical(t, s, o.alice.token, c.Id.String()).ExpectStatus(t, 200).Decode(t, &ordered)
	if ordered.Physical.State != "awaiting_activation" || ordered.Physical.Replacement {
		t.Fatalf("ordered: %+v", ordered.Physical)
	}
	expectActions(t, "cardholder, awaiting activation", ordered, "activate", "freeze")
	expectActions(t, "owner, awaiting activation", getCard(t, s, o.owner.token, c.Id.String()), "freeze")
	expectActions(t, "admin, awaiting activation", getCard(t, s, o.admin.token, c.Id.String()), "freeze")
	orderPhysical(t, s, o.alice.token, c.Id.String()).ExpectError(t, 409, "conflict")
	orderPhysical(t, s, o.owner.token, c.Id.String()).ExpectError(t, 409, "conflict")
	// An owner may order one for the holder, and for a card without a holder, which never offers activation.
	var forOrg api.Card
	orderPhysical(t, s, o.owner.token, orgCard.Id.String()).ExpectStatus(t, 200).Decode(t, &forOrg)
	expectActions(t, "organization card, awaiting activation", forOrg, "freeze")

	code := shipCard(t, s, c.Id.String())
	s.Post(t, "/api/v1/sandbox/cards/"+c.Id.String()+"/ship", sbx, nil).ExpectError(t, 409, "conflict")
	orgCode := shipCard(t, s, orgCard.Id.String())

	// Only the cardholder activates, with the code of the card's letter.
	activate(t, s, o.owner.token, c.Id.String(), code).ExpectError(t, 403, "forbidden")
	activate(t, s, o.admin.token, c.Id.String(), code).ExpectError(t, 403, "forbidden")
	activate(t, s, o.bob.token, c.Id.String(), code).ExpectError(t, 404, "not_found")
	activate(t, s, o.owner.token, orgCard.Id.String(), orgCode).ExpectError(t, 403, "forbidden")
	activate(t, s, o.alice.token, c.Id.String(), otherDigits(code)).ExpectError(t, 422, "invalid_code")
	for _, bad := range []any{"12a456", "12345", "1234567", c.LastFour, "", 123456, nil} {
		expectInvalidField(t, s.Post(t, cardPath(c.Id.String(), "activate"), o.alice.token, map[string]any{"activation_code": bad}), "activation_code")
	}
	if got := getCard(t, s, o.alice.token, c.Id.String()); got.Physical.State != "awaiting_activation" {
		t.Fatalf("refused activations changed the card: %+v", got.Physical)
	}
	var active api.Card
	activate(t, s, o.alice.token, c.Id.String(), code).ExpectStatus(t, 200).Decode(t, &active)
	if active.Physical.State != "active" || active.LastFour != c.LastFour {
		t.Fatalf("activated: %+v", active)
	}
	expectActions(t, "cardholder, active", active, "set_pin", "freeze")
	expectActions(t, "owner, active", getCard(t, s, o.owner.token, c.Id.String()), "freeze")
	activate(t, s, o.alice.token, c.Id.String(), code).ExpectError(t, 409, "conflict")
	orderPhysical(t, s, o.alice.token, c.Id.String()).ExpectError(t, 409, "conflict")
	expectActions(t, "cardholder, active and frozen", cardAction(t, s, o.alice.token, c.Id.String(), "freeze"), "set_pin", "unfreeze")
	expectActions(t, "owner, active and frozen", getCard(t, s, o.owner.token, c.Id.String()), "unfreeze")

	// Orders sent at once for one card: exactly one is placed.
	fresh := cardFor(t, s, o.id, o.alice.id, 100)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answers = map[int]int{}
	)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := []string{o.alice.token, o.owner.token, o.admin.token}[i%3]
			r := s.Do(t, apitest.Request{Method: "POST", Path: cardPath(fresh.Id.String(), "physical"), Bearer: token,
				Body: map[string]any{"shipping_address": shippingAddress()}, Header: oneShot})
			mu.Lock()
			answers[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if answers[200] != 1 || answers[409] != 5 {
		t.Fatalf("concurrent orders answered %v, want one 200 and five 409", answers)
	}
}

// TestCardActivationNeedsTheLettersCode: a physical card is activated
// with the 6-digit code printed on the letter it ships with, never with the
// last four digits every Card shows; one card's code does not activate
// another, and the code appears in no Card and no log line.
func TestCardActivationNeedsTheLettersCode(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	first := cardFor(t, s, o.id, o.alice.id, 100)
	second := cardFor(t, s, o.id, o.alice.id, 100)
	var ordered api.Card
	orderPhysical(t, s, o.alice.token, first.Id.String()).ExpectStatus(t, 200).Decode(t, &ordered)
	// The letter's code is made when the card is ordered, so it works before shipping too;
	// shipping is how the sandbox hands it over.
	orderPhysical(t, s, o.alice.token, second.Id.String()).ExpectStatus(t, 200)
	firstCode, secondCode := shipCard(t, s, first.Id.String()), shipCard(t, s, second.Id.String())
	if firstCode == secondCode {
		t.Fatalf("two letters carry the same code %s", firstCode)
	}

	// The last four digits, as the old body or in place of the code, activate nothing.
	expectInvalidField(t, s.Post(t, cardPath(first.Id.String(), "activate"), o.alice.token, map[string]any{"last_four": first.LastFour}), "last_four")
	expectInvalidField(t, activate(t, s, o.alice.token, first.Id.String(), first.LastFour), "activation_code")
	// Another card's code is a wrong code.
	activate(t, s, o.alice.token, first.Id.String(), secondCode).ExpectError(t, 422, "invalid_code")
	if got := getCard(t, s, o.alice.token, first.Id.String()); got.Physical.State != "awaiting_activation" {
		t.Fatalf("a wrong code activated the card: %+v", got.Physical)
	}

	var bodies []string
	record := func(r *apitest.Response) *apitest.Response { bodies = append(bodies, string(r.Body)); return r }
	record(s.Get(t, cardPath(first.Id.String(), ""), o.alice.token))
	record(s.Get(t, cardPath(first.Id.String(), ""), o.owner.token))
	record(s.Get(t, "/api/v1/organizations/"+o.id+"/cards", o.owner.token))
	var active api.Card
	record(activate(t, s, o.alice.token, first.Id.String(), firstCode)).ExpectStatus(t, 200).Decode(t, &active)
	if active.Physical.State != "active" {
		t.Fatalf("activated: %+v", active.Physical)
	}
	record(activate(t, s, o.alice.token, second.Id.String(), secondCode)).ExpectStatus(t, 200)
	for i, b := range append(bodies, string(mustJSON(t, ordered))) {
		for _, code := range []string{firstCode, secondCode} {
			if strings.Contains(b, code) || strings.Contains(b, "activation_code") {
				t.Fatalf("response %d shows an activation code: %s", i, b)
			}
		}
	}
	for _, code := range []string{firstCode, secondCode} {
		if strings.Contains(s.Logs.String(), code) {
			t.Fatal("the logs contain an activation code")
		}
	}
	// A used code activates nothing again.
	activate(t, s, o.alice.token, first.Id.String(), firstCode).ExpectError(t, 409, "conflict")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCardActivationGuessesAreLimitedPerPerson: ten wrong codes by one
// person lock activation for that person on every card, even with the
// right code, until Retry-After has passed; another person is unaffected.
func TestCardActivationGuessesAreLimitedPerPerson(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	first := cardFor(t, s, o.id, o.alice.id, 100)
	second := cardFor(t, s, o.id, o.alice.id, 100)
	bobs := cardFor(t, s, o.id, o.bob.id, 100)
	firstCode := orderAndShip(t, s, o.alice.token, first.Id.String())
	secondCode := orderAndShip(t, s, o.alice.token, second.Id.String())
	bobsCode := orderAndShip(t, s, o.bob.token, bobs.Id.String())

	for range 10 {
		activate(t, s, o.alice.token, first.Id.String(), otherDigits(firstCode)).ExpectError(t, 422, "invalid_code")
	}
	locked := func(r *apitest.Response) int {
		t.Helper()
		r.ExpectError(t, http.StatusTooManyRequests, "rate_limited")
		secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || secs <= 0 || secs > 24*60*60 {
			t.Fatalf("Retry-After %q, want seconds within a day", r.Header.Get("Retry-After"))
		}
		return secs
	}
	retry := locked(activate(t, s, o.alice.token, second.Id.String(), secondCode))
	locked(activate(t, s, o.alice.token, first.Id.String(), firstCode))
	for _, c := range []api.Card{first, second} {
		if got := getCard(t, s, o.alice.token, c.Id.String()); got.Physical.State != "awaiting_activation" {
			t.Fatalf("a locked activation went through: %+v", got.Physical)
		}
	}
	// Another person's activations are not limited by Alice's guesses.
	activate(t, s, o.bob.token, bobs.Id.String(), bobsCode).ExpectStatus(t, 200)

	// Locked until Retry-After has passed, then the right code works.
	if retry > 31 {
		advance(t, s, time.Duration(retry-31)*time.Second)
		o.alice.signInAgain(t, s) // the session may have idled out; signing in spends 30 seconds
		locked(activate(t, s, o.alice.token, second.Id.String(), secondCode))
		advance(t, s, time.Second)
	} else {
		advance(t, s, time.Duration(retry)*time.Second)
	}
	var got api.Card
	activate(t, s, o.alice.token, second.Id.String(), secondCode).ExpectStatus(t, 200).Decode(t, &got)
	if got.Physical.State != "active" {
		t.Fatalf("activation after the lock: %+v", got.Physical)
	}
}

// TestCardConcurrentActivationGuessesStayWithinTheLimit: thirty wrong
// guesses sent at once count like thirty in a row: ten are answered
// invalid_code, the rest rate_limited, and then even the right code waits.
func TestCardConcurrentActivationGuessesStayWithinTheLimit(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	c := cardFor(t, s, o.id, o.owner.id, 100)
	code := orderAndShip(t, s, o.owner.token, c.Id.String())
	wrong := otherDigits(code)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answers = map[string]int{}
		start   = make(chan struct{})
	)
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := s.Do(t, apitest.Request{Method: "POST", Path: cardPath(c.Id.String(), "activate"), Bearer: o.owner.token,
				Body: map[string]any{"activation_code": wrong}, Header: oneShot})
			var e apitest.ErrorBody
			_ = json.Unmarshal(r.Body, &e)
			mu.Lock()
			answers[strconv.Itoa(r.Status)+" "+e.Error.Type]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if answers["422 invalid_code"] != 10 || answers["429 rate_limited"] != 20 {
		t.Fatalf("answers %v, want 10 invalid_code and 20 rate_limited", answers)
	}
	activate(t, s, o.owner.token, c.Id.String(), code).ExpectError(t, http.StatusTooManyRequests, "rate_limited")
}

func TestSettingACardPIN(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	c := cardFor(t, s, o.id, o.alice.id, 100)
	pin := func(token, cardID string, value any) *apitest.Response {
		t.Helper()
		return s.Post(t, cardPath(cardID, "pin"), token, map[string]any{"pin": value})
	}
	// No PIN before the physical card is active.
	pin(o.alice.token, c.Id.String(), "4821").ExpectError(t, 409, "conflict")
	letter := orderAndShip(t, s, o.alice.token, c.Id.String())
	pin(o.alice.token, c.Id.String(), "4821").ExpectError(t, 409, "conflict")
	activate(t, s, o.alice.token, c.Id.String(), letter).ExpectStatus(t, 200)

	// Weak or malformed PINs are refused before any step-up; a run may wrap around from 9 to 0.
	for _, weak := range []any{"1111", "0000", "1234", "0123", "6789", "9876", "3210",
		"7890", "8901", "9012", "0987", "1098", "2109",
		"12a4", "12345", "123", "", 4821, nil} {
		expectInvalidField(t, pin(o.alice.token, c.Id.String(), weak), "pin")
	}
	// Only the cardholder sets it.
	pin(o.owner.token, c.Id.String(), "4821").ExpectError(t, 403, "forbidden")
	pin(o.admin.token, c.Id.String(), "4821").ExpectError(t, 403, "forbidden")
	pin(o.bob.token, c.Id.String(), "4821").ExpectError(t, 404, "not_found")

	// The cardholder steps up with the authenticator, then sets it.
	up := expectStepUp(t, pin(o.alice.token, c.Id.String(), "4821"))
	completeStepUp(t, s, o.alice.token, up.Id.String(), "totp", wrongDigits(code(t, s, o.alice.secret))).ExpectError(t, 422, "invalid_code")
	completeStepUp(t, s, o.alice.token, up.Id.String(), "totp", code(t, s, o.alice.secret)).ExpectStatus(t, 200)
	r := pin(o.alice.token, c.Id.String(), "4821").ExpectStatus(t, http.StatusNoContent)
	if len(r.Body) != 0 {
		t.Fatalf("204 with a body: %s", r.Body)
	}
	// Within the window it can be changed again, still never to a weak one.
	pin(o.alice.token, c.Id.String(), "7305").ExpectStatus(t, http.StatusNoContent)
	expectInvalidField(t, pin(o.alice.token, c.Id.String(), "5555"), "pin")
	// Another session of the cardholder has no window of its own.
	advance(t, s, 30*time.Second)
	other := signInFully(t, s, o.alice.email, o.alice.secret)
	expectStepUp(t, pin(other, c.Id.String(), "4821"))
	expectActions(t, "after setting the PIN", getCard(t, s, o.alice.token, c.Id.String()), "set_pin", "freeze")
}
