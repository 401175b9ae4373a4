package e2e_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/internal/apitest"
)

// Physical cards (CONTRACT §6, DECISIONS): ordering with a shipping
// address, shipping in the sandbox, activation by the cardholder with the
// last four digits (guesses limited per person), and setting a PIN behind a step-up.

func shippingAddress() map[string]any {
	return map[string]any{"address_line1": "Friedrichstraße 68", "address_line2": "3. OG", "city": "Berlin",
		"postal_code": "10117", "state": "Berlin", "country_code": "DE"}
}

func orderPhysical(t *testing.T, s *apitest.Server, token, cardID string) *apitest.Response {
	t.Helper()
	return s.Post(t, cardPath(cardID, "physical"), token, map[string]any{"shipping_address": shippingAddress()})
}

func activate(t *testing.T, s *apitest.Server, token, cardID, lastFour string) *apitest.Response {
	t.Helper()
	return s.Post(t, cardPath(cardID, "activate"), token, map[string]any{"last_four": lastFour})
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

// otherDigits is four digits that differ from lastFour.
func otherDigits(lastFour string) string {
	b := []byte(lastFour)
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
	activate(t, s, o.alice.token, c.Id.String(), c.LastFour).ExpectError(t, 409, "conflict")

	var ordered client.Card
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
	var forOrg client.Card
	orderPhysical(t, s, o.owner.token, orgCard.Id.String()).ExpectStatus(t, 200).Decode(t, &forOrg)
	expectActions(t, "organization card, awaiting activation", forOrg, "freeze")

	var shipped client.Card
	s.Post(t, "/api/v1/sandbox/cards/"+c.Id.String()+"/ship", sbx, nil).ExpectStatus(t, 200).Decode(t, &shipped)
	if shipped.Physical.State != "awaiting_activation" {
		t.Fatalf("shipped: %+v", shipped.Physical)
	}
	s.Post(t, "/api/v1/sandbox/cards/"+c.Id.String()+"/ship", sbx, nil).ExpectError(t, 409, "conflict")

	// Only the cardholder activates, with the right last four digits.
	activate(t, s, o.owner.token, c.Id.String(), c.LastFour).ExpectError(t, 403, "forbidden")
	activate(t, s, o.admin.token, c.Id.String(), c.LastFour).ExpectError(t, 403, "forbidden")
	activate(t, s, o.bob.token, c.Id.String(), c.LastFour).ExpectError(t, 404, "not_found")
	activate(t, s, o.owner.token, orgCard.Id.String(), orgCard.LastFour).ExpectError(t, 403, "forbidden")
	activate(t, s, o.alice.token, c.Id.String(), otherDigits(c.LastFour)).ExpectError(t, 422, "invalid_code")
	for _, bad := range []any{"12a4", "123", "12345", "", 1234} {
		expectInvalidField(t, s.Post(t, cardPath(c.Id.String(), "activate"), o.alice.token, map[string]any{"last_four": bad}), "last_four")
	}
	if got := getCard(t, s, o.alice.token, c.Id.String()); got.Physical.State != "awaiting_activation" {
		t.Fatalf("refused activations changed the card: %+v", got.Physical)
	}
	var active client.Card
	activate(t, s, o.alice.token, c.Id.String(), c.LastFour).ExpectStatus(t, 200).Decode(t, &active)
	if active.Physical.State != "active" || active.LastFour != c.LastFour {
		t.Fatalf("activated: %+v", active)
	}
	expectActions(t, "cardholder, active", active, "set_pin", "freeze")
	expectActions(t, "owner, active", getCard(t, s, o.owner.token, c.Id.String()), "freeze")
	activate(t, s, o.alice.token, c.Id.String(), c.LastFour).ExpectError(t, 409, "conflict")
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

// TestCardActivationGuessesAreLimitedPerPerson: ten wrong last-four guesses by
// one person lock activation for that person on every card, even with the
// right digits, until Retry-After has passed; another person is unaffected.
func TestCardActivationGuessesAreLimitedPerPerson(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	first := cardFor(t, s, o.id, o.alice.id, 100)
	second := cardFor(t, s, o.id, o.alice.id, 100)
	bobs := cardFor(t, s, o.id, o.bob.id, 100)
	for _, c := range []client.Card{first, second} {
		orderPhysical(t, s, o.alice.token, c.Id.String()).ExpectStatus(t, 200)
	}
	orderPhysical(t, s, o.bob.token, bobs.Id.String()).ExpectStatus(t, 200)

	for range 10 {
		activate(t, s, o.alice.token, first.Id.String(), otherDigits(first.LastFour)).ExpectError(t, 422, "invalid_code")
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
	retry := locked(activate(t, s, o.alice.token, second.Id.String(), second.LastFour))
	locked(activate(t, s, o.alice.token, first.Id.String(), first.LastFour))
	for _, c := range []client.Card{first, second} {
		if got := getCard(t, s, o.alice.token, c.Id.String()); got.Physical.State != "awaiting_activation" {
			t.Fatalf("a locked activation went through: %+v", got.Physical)
		}
	}
	// Another person's activations are not limited by Alice's guesses.
	activate(t, s, o.bob.token, bobs.Id.String(), bobs.LastFour).ExpectStatus(t, 200)

	// Locked until Retry-After has passed, then the right digits work.
	if retry > 31 {
		advance(t, s, time.Duration(retry-31)*time.Second)
		o.alice.signInAgain(t, s) // the session may have idled out; signing in spends 30 seconds
		locked(activate(t, s, o.alice.token, second.Id.String(), second.LastFour))
		advance(t, s, time.Second)
	} else {
		advance(t, s, time.Duration(retry)*time.Second)
	}
	var got client.Card
	activate(t, s, o.alice.token, second.Id.String(), second.LastFour).ExpectStatus(t, 200).Decode(t, &got)
	if got.Physical.State != "active" {
		t.Fatalf("activation after the lock: %+v", got.Physical)
	}
}

// TestCardConcurrentActivationGuessesStayWithinTheLimit: thirty wrong
// guesses sent at once count like thirty in a row: ten are answered
// invalid_code, the rest rate_limited, and then even the right digits wait.
func TestCardConcurrentActivationGuessesStayWithinTheLimit(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	c := cardFor(t, s, o.id, o.owner.id, 100)
	orderPhysical(t, s, o.owner.token, c.Id.String()).ExpectStatus(t, 200)
	wrong := otherDigits(c.LastFour)
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
				Body: map[string]any{"last_four": wrong}, Header: oneShot})
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
	activate(t, s, o.owner.token, c.Id.String(), c.LastFour).ExpectError(t, http.StatusTooManyRequests, "rate_limited")
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
	orderPhysical(t, s, o.alice.token, c.Id.String()).ExpectStatus(t, 200)
	pin(o.alice.token, c.Id.String(), "4821").ExpectError(t, 409, "conflict")
	activate(t, s, o.alice.token, c.Id.String(), c.LastFour).ExpectStatus(t, 200)

	// Weak or malformed PINs are refused before any step-up.
	for _, weak := range []any{"1111", "0000", "1234", "0123", "6789", "9876", "3210", "12a4", "12345", "123", "", 4821, nil} {
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
