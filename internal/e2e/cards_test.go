package e2e_test

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// Cards (docs/api.md, Cards): listing, reading, changing
// the limit and holder name, freezing and unfreezing, who may do what, and
// how organization status and API keys bound all of it.

// cardUser is a signed-in staff member of a card test's organization.
type cardUser struct {
	id, email, secret, token string
}

// cardOrg is an organization with an owner, an admin and two members, each
// signed in with an authenticator. Alice has a first and a last name; Bob has none.
type cardOrg struct {
	id                       string
	owner, admin, alice, bob cardUser
}

func newCardOrg(t *testing.T, s *apitest.Server, domain string) *cardOrg {
	t.Helper()
	o := newCardOwner(t, s, domain)
	o.admin = addCardUser(t, s, o.id, "admin@"+domain, "admin", "", "")
	o.alice = addCardUser(t, s, o.id, "alice@"+domain, "member", "Alice", "Liddell")
	o.bob = addCardUser(t, s, o.id, "bob@"+domain, "member", "", "")
	return o
}

// newCardOwner is an organization whose owner alone is signed in.
func newCardOwner(t *testing.T, s *apitest.Server, domain string) *cardOrg {
	t.Helper()
	org := createOrg(t, s, "owner@"+domain)
	o := &cardOrg{id: org.Organization.Id.String()}
	o.owner = cardUser{id: org.Owner.UserId.String(), email: "owner@" + domain, secret: *org.Owner.TotpSecret}
	o.owner.token = signInFully(t, s, o.owner.email, o.owner.secret)
	return o
}

// addCardUser adds a staff member with an authenticator and signs them in.
func addCardUser(t *testing.T, s *apitest.Server, org, email, role, first, last string) cardUser {
	t.Helper()
	member := api.SandboxNewMember{Email: email, Password: ptr(password), Role: api.Role(role), Totp: ptr(true)}
	if first != "" {
		member.FirstName, member.LastName = &first, &last
	}
	r := ok[*api.SandboxAddOrganizationUserResponse](t, http.StatusCreated)(sandboxClient(t, s).API().SandboxAddOrganizationUserWithResponse(t.Context(),
		uuidOf(t, org), nil, member))
	u := cardUser{id: r.JSON201.UserId.String(), email: email, secret: *r.JSON201.TotpSecret}
	u.token = signInFully(t, s, email, u.secret)
	return u
}

// signInAgain opens a new session for u (after the old one idled out).
func (u *cardUser) signInAgain(t *testing.T, s *apitest.Server) {
	t.Helper()
	u.token = signInFully(t, s, u.email, u.secret)
}

// issueCard creates a card through the sandbox.
func issueCard(t *testing.T, s *apitest.Server, org string, body map[string]any) api.Card {
	t.Helper()
	var c api.Card
	s.Post(t, "/api/v1/sandbox/organizations/"+org+"/cards", sbx, body).ExpectStatus(t, http.StatusCreated).Decode(t, &c)
	return c
}

// cardFor is a visa card of userID with monthlyLimit USD.
func cardFor(t *testing.T, s *apitest.Server, org, userID string, monthlyLimit int) api.Card {
	t.Helper()
	return issueCard(t, s, org, map[string]any{"user_id": userID, "monthly_limit": monthlyLimit})
}

func setCardStatus(t *testing.T, s *apitest.Server, cardID, status string) api.Card {
	t.Helper()
	var c api.Card
	s.Post(t, "/api/v1/sandbox/cards/"+cardID+"/status", sbx, map[string]any{"status": status}).ExpectStatus(t, 200).Decode(t, &c)
	if string(c.Status) != status {
		t.Fatalf("sandbox status %s answered a card with status %s", status, c.Status)
	}
	return c
}

func cardPath(cardID, action string) string {
	if action == "" {
		return "/api/v1/cards/" + cardID
	}
	return "/api/v1/cards/" + cardID + "/" + action
}

func getCard(t *testing.T, s *apitest.Server, token, cardID string) api.Card {
	t.Helper()
	var c api.Card
	s.Get(t, cardPath(cardID, ""), token).ExpectStatus(t, 200).Decode(t, &c)
	return c
}

// cardAction posts to a card operation (no body) and decodes the card it answers.
func cardAction(t *testing.T, s *apitest.Server, token, cardID, action string) api.Card {
	t.Helper()
	var c api.Card
	s.Post(t, cardPath(cardID, action), token, nil).ExpectStatus(t, 200).Decode(t, &c)
	return c
}

func patchCard(t *testing.T, s *apitest.Server, token, cardID string, body any) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "PATCH", Path: cardPath(cardID, ""), Bearer: token, Body: body})
}

func listCards(t *testing.T, s *apitest.Server, token, org, query string) api.CardPage {
	t.Helper()
	var p api.CardPage
	s.Get(t, "/api/v1/organizations/"+org+"/cards?"+query, token).ExpectStatus(t, 200).Decode(t, &p)
	return p
}

func cardIDs(cs []api.Card) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Id.String()
	}
	return out
}

// walkCards reads every page of the list with query and returns the ids in order.
func walkCards(t *testing.T, s *apitest.Server, token, org, query string) []string {
	t.Helper()
	return walk(t, query, func(q string) ([]string, bool, *string) {
		p := listCards(t, s, token, org, q)
		return cardIDs(p.Data), p.HasMore, p.NextCursor
	})
}

func expectIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got == nil {
		got = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// actions are the card's available_actions as strings.
func actions(c api.Card) []string {
	out := []string{}
	for _, a := range c.AvailableActions {
		out = append(out, string(a))
	}
	return out
}

func expectActions(t *testing.T, what string, c api.Card, want ...string) {
	t.Helper()
	got := actions(c)
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: available_actions %v, want %v", what, got, want)
	}
}

var lastFourPattern = regexp.MustCompile(`^[0-9]{4}$`)

func TestListAndGetCards(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	other := newCardOrg(t, s, "globex.test")
	step := func() { advance(t, s, time.Second) } // distinct created_at, so newest first is defined

	created := now(t, s)
	c1 := cardFor(t, s, o.id, o.alice.id, 1000)
	step()
	c2 := cardFor(t, s, o.id, o.alice.id, 500)
	step()
	c3 := cardFor(t, s, o.id, o.bob.id, 200)
	step()
	c4 := issueCard(t, s, o.id, map[string]any{"monthly_limit": 300, "card_holder_name": "Acme Operations",
		"card_provider": "mastercard_issuer", "allow_physical": false})
	step()
	c5 := cardFor(t, s, o.id, o.admin.id, 0)
	foreign := cardFor(t, s, other.id, other.owner.id, 100)
	cardAction(t, s, o.owner.token, c2.Id.String(), "freeze")
	setCardStatus(t, s, c3.Id.String(), "inactive")

	// The record as issued.
	if c1.OrganizationId.String() != o.id || c1.UserId == nil || c1.UserId.String() != o.alice.id || c1.User == nil || c1.User.Id.String() != o.alice.id ||
		c1.User.Email != o.alice.email || deref(c1.User.FirstName) != "Alice" || deref(c1.User.LastName) != "Liddell" {
		t.Fatalf("card 1 owner fields: %+v", c1)
	}
	if deref(c1.CardHolderName) != "Alice Liddell" {
		t.Errorf("card_holder_name = %v, want the holder's name Alice Liddell", c1.CardHolderName)
	}
	if c1.CardProvider != "visa_issuer" || c1.Status != "active" || c1.Frozen || c1.AllowPhysical == nil || !*c1.AllowPhysical ||
		!lastFourPattern.MatchString(c1.LastFour) {
		t.Fatalf("card 1 defaults: %+v", c1)
	}
	if l := c1.Limit; l.Currency != "USD" || l.MonthlyLimit != 1000 || l.Period != "monthly" || l.SpentThisMonth != "0.00" || l.Utilization != "0" {
		t.Fatalf("card 1 limit: %+v", l)
	}
	if c1.Physical.State != "none" || c1.Physical.Replacement {
		t.Fatalf("card 1 physical: %+v", c1.Physical)
	}
	if !c1.CreatedAt.Equal(created) {
		t.Errorf("created_at %v, want the service clock %v", c1.CreatedAt, created)
	}
	expectActions(t, "new card", c1, "order_physical", "freeze")
	if c3.CardHolderName != nil || c3.User == nil || c3.User.FirstName != nil {
		t.Errorf("a holder without a name: card_holder_name %v, user %+v; want null names", c3.CardHolderName, c3.User)
	}
	if c4.UserId != nil || c4.User != nil || deref(c4.CardHolderName) != "Acme Operations" || c4.CardProvider != "mastercard_issuer" ||
		c4.AllowPhysical == nil || *c4.AllowPhysical {
		t.Fatalf("organization card: %+v", c4)
	}
	expectActions(t, "organization card without physical", c4, "freeze")
	expectActions(t, "frozen card", getCard(t, s, o.owner.token, c2.Id.String()), "order_physical", "unfreeze")
	expectActions(t, "inactive card", getCard(t, s, o.owner.token, c3.Id.String()))

	// Owners and admins see every card, newest first, filtered as asked.
	all := []string{c5.Id.String(), c4.Id.String(), c3.Id.String(), c2.Id.String(), c1.Id.String()}
	for _, who := range []cardUser{o.owner, o.admin} {
		expectIDs(t, who.email+" lists", cardIDs(listCards(t, s, who.token, o.id, "").Data), all...)
	}
	tok := o.owner.token
	expectIDs(t, "status=inactive", cardIDs(listCards(t, s, tok, o.id, "status=inactive").Data), c3.Id.String())
	expectIDs(t, "status=active", cardIDs(listCards(t, s, tok, o.id, "status=active").Data), c5.Id.String(), c4.Id.String(), c2.Id.String(), c1.Id.String())
	expectIDs(t, "status=revoked", cardIDs(listCards(t, s, tok, o.id, "status=revoked").Data))
	expectIDs(t, "frozen=true", cardIDs(listCards(t, s, tok, o.id, "frozen=true").Data), c2.Id.String())
	expectIDs(t, "frozen=false", cardIDs(listCards(t, s, tok, o.id, "frozen=false").Data), c5.Id.String(), c4.Id.String(), c3.Id.String(), c1.Id.String())
	expectIDs(t, "user_id=alice", cardIDs(listCards(t, s, tok, o.id, "user_id="+o.alice.id).Data), c2.Id.String(), c1.Id.String())
	expectIDs(t, "user_id=alice&frozen=false", cardIDs(listCards(t, s, tok, o.id, "user_id="+o.alice.id+"&frozen=false").Data), c1.Id.String())

	// Pages of two, and of three with a filter, walk the same cards without repeats.
	expectIDs(t, "walk limit=2", walkCards(t, s, tok, o.id, "limit=2"), all...)
	expectIDs(t, "walk limit=1", walkCards(t, s, tok, o.id, "limit=1"), all...)
	expectIDs(t, "walk active limit=3", walkCards(t, s, tok, o.id, "status=active&limit=3"), c5.Id.String(), c4.Id.String(), c2.Id.String(), c1.Id.String())
	first := listCards(t, s, tok, o.id, "status=active&limit=3")
	if len(first.Data) != 3 || !first.HasMore || first.NextCursor == nil {
		t.Fatalf("first page of three: %d items, has_more %v", len(first.Data), first.HasMore)
	}
	s.Get(t, "/api/v1/organizations/"+o.id+"/cards?status=inactive&limit=3&cursor="+url.QueryEscape(*first.NextCursor), tok).
		ExpectError(t, 400, "invalid_cursor")
	s.Get(t, "/api/v1/organizations/"+o.id+"/cards?cursor=not-a-cursor", tok).ExpectError(t, 400, "invalid_cursor")
	for param, bad := range map[string]string{"status": "lost", "frozen": "maybe", "user_id": "alice", "limit": "0"} {
		expectInvalidField(t, s.Get(t, "/api/v1/organizations/"+o.id+"/cards?"+param+"="+bad, tok), param)
	}
	expectInvalidField(t, s.Get(t, "/api/v1/organizations/"+o.id+"/cards?limit=101", tok), "limit")

	// A member sees only their own cards, whatever they ask for.
	expectIDs(t, "alice lists", cardIDs(listCards(t, s, o.alice.token, o.id, "").Data), c2.Id.String(), c1.Id.String())
	expectIDs(t, "alice asks for bob's", cardIDs(listCards(t, s, o.alice.token, o.id, "user_id="+o.bob.id).Data))
	expectIDs(t, "alice asks for inactive", cardIDs(listCards(t, s, o.alice.token, o.id, "status=inactive").Data))
	expectIDs(t, "alice walks", walkCards(t, s, o.alice.token, o.id, "limit=1"), c2.Id.String(), c1.Id.String())
	expectIDs(t, "bob lists", cardIDs(listCards(t, s, o.bob.token, o.id, "").Data), c3.Id.String())
	if got := getCard(t, s, o.alice.token, c1.Id.String()); got.Id != c1.Id || got.LastFour != c1.LastFour {
		t.Fatalf("alice reads her card: %+v", got)
	}
	s.Get(t, cardPath(c3.Id.String(), ""), o.alice.token).ExpectError(t, 404, "not_found")
	s.Get(t, cardPath(c4.Id.String(), ""), o.alice.token).ExpectError(t, 404, "not_found")
	s.Get(t, cardPath(c1.Id.String(), ""), o.bob.token).ExpectError(t, 404, "not_found")
	s.Get(t, cardPath(c1.Id.String(), ""), o.admin.token).ExpectStatus(t, 200)

	// Another organization's cards are not found, and never listed.
	s.Get(t, cardPath(foreign.Id.String(), ""), o.owner.token).ExpectError(t, 404, "not_found")
	s.Get(t, cardPath(c1.Id.String(), ""), other.owner.token).ExpectError(t, 404, "not_found")
	s.Get(t, "/api/v1/organizations/"+other.id+"/cards", o.owner.token).ExpectError(t, 404, "not_found")
	expectIDs(t, "other organization lists", cardIDs(listCards(t, s, other.owner.token, other.id, "").Data), foreign.Id.String())
	expectIDs(t, "user_id of another organization", cardIDs(listCards(t, s, tok, o.id, "user_id="+other.owner.id).Data))
	s.Get(t, cardPath(uuid.NewString(), ""), tok).ExpectError(t, 404, "not_found")

	// The sandbox issues cards only to members of the organization.
	expectInvalidField(t, s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/cards", sbx,
		map[string]any{"user_id": other.owner.id, "monthly_limit": 10}), "user_id")
	expectInvalidField(t, s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/cards", sbx, map[string]any{"user_id": o.alice.id}), "monthly_limit")
	expectInvalidField(t, s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/cards", sbx,
		map[string]any{"user_id": o.alice.id, "monthly_limit": 1000001}), "monthly_limit")
	if n := len(listCards(t, s, tok, o.id, "").Data); n != 5 {
		t.Fatalf("refused sandbox requests issued cards: %d cards", n)
	}

	// A page holds 50 cards unless asked otherwise, and at most 100.
	for range 46 {
		cardFor(t, s, o.id, o.bob.id, 1)
	}
	if p := listCards(t, s, tok, o.id, ""); len(p.Data) != 50 || !p.HasMore || p.NextCursor == nil {
		t.Fatalf("default page: %d cards, has_more %v", len(p.Data), p.HasMore)
	}
	if p := listCards(t, s, tok, o.id, "limit=100"); len(p.Data) != 51 || p.HasMore || p.NextCursor != nil {
		t.Fatalf("page of 100: %d cards, has_more %v", len(p.Data), p.HasMore)
	}
	if n := len(walkCards(t, s, tok, o.id, "")); n != 51 {
		t.Fatalf("walked %d cards, want 51", n)
	}
}

func TestChangingACardsLimitAndHolderName(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	c := cardFor(t, s, o.id, o.alice.id, 1000)
	bobs := cardFor(t, s, o.id, o.bob.id, 100)

	var got api.Card
	patchCard(t, s, o.owner.token, c.Id.String(), map[string]any{"monthly_limit": 2500}).ExpectStatus(t, 200).Decode(t, &got)
	if got.Limit.MonthlyLimit != 2500 || deref(got.CardHolderName) != "Alice Liddell" {
		t.Fatalf("owner set the limit: %+v", got)
	}
	patchCard(t, s, o.admin.token, c.Id.String(), map[string]any{"card_holder_name": "A. Liddell"}).ExpectStatus(t, 200).Decode(t, &got)
	if got.Limit.MonthlyLimit != 2500 || deref(got.CardHolderName) != "A. Liddell" {
		t.Fatalf("admin set the name: %+v", got)
	}
	patchCard(t, s, o.admin.token, c.Id.String(), map[string]any{"monthly_limit": 0, "card_holder_name": "Alice L."}).ExpectStatus(t, 200).Decode(t, &got)
	if got.Limit.MonthlyLimit != 0 || deref(got.CardHolderName) != "Alice L." || got.Limit.Utilization != "0" {
		t.Fatalf("admin set both: %+v", got)
	}
	patchCard(t, s, o.owner.token, c.Id.String(), map[string]any{"monthly_limit": 1000000}).ExpectStatus(t, 200).Decode(t, &got)
	if got.Limit.MonthlyLimit != 1000000 {
		t.Fatalf("the largest limit: %+v", got.Limit)
	}
	if read := getCard(t, s, o.alice.token, c.Id.String()); read.Limit.MonthlyLimit != 1000000 || deref(read.CardHolderName) != "Alice L." {
		t.Fatalf("the holder reads %+v", read)
	}

	// The cardholder, a member, may not change her own limit; a member cannot see another's card.
	patchCard(t, s, o.alice.token, c.Id.String(), map[string]any{"monthly_limit": 5}).ExpectError(t, 403, "forbidden")
	patchCard(t, s, o.alice.token, bobs.Id.String(), map[string]any{"monthly_limit": 5}).ExpectError(t, 404, "not_found")
	other := newCardOrg(t, s, "globex.test")
	patchCard(t, s, other.owner.token, c.Id.String(), map[string]any{"monthly_limit": 5}).ExpectError(t, 404, "not_found")

	// Bad values are refused, naming the field; an empty body is refused.
	for _, bad := range []struct {
		name  string
		body  any
		field string
	}{
		{"negative limit", map[string]any{"monthly_limit": -1}, "monthly_limit"},
		{"limit over a million", map[string]any{"monthly_limit": 1000001}, "monthly_limit"},
		{"fractional limit", map[string]any{"monthly_limit": 12.5}, "monthly_limit"},
		{"limit as a string", map[string]any{"monthly_limit": "100"}, "monthly_limit"},
		{"null limit", map[string]any{"monthly_limit": nil}, ""},
		{"empty name", map[string]any{"card_holder_name": ""}, "card_holder_name"},
		{"long name", map[string]any{"card_holder_name": strings.Repeat("n", 101)}, "card_holder_name"},
		{"name as a number", map[string]any{"card_holder_name": 7}, "card_holder_name"},
		{"unknown field", map[string]any{"status": "revoked"}, "status"},
		{"good limit, bad name", map[string]any{"monthly_limit": 10, "card_holder_name": ""}, "card_holder_name"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			r := patchCard(t, s, o.owner.token, c.Id.String(), bad.body)
			if bad.field == "" { // null is no value: refused, whichever way it is described
				r.ExpectError(t, 400, "invalid_request")
				return
			}
			expectInvalidField(t, r, bad.field)
		})
	}
	for _, empty := range []any{map[string]any{}, ""} {
		e := patchCard(t, s, o.owner.token, c.Id.String(), empty).ExpectError(t, 400, "invalid_request")
		if len(e.Error.Details) == 0 {
			t.Errorf("empty body %q: no details", empty)
		}
	}
	if read := getCard(t, s, o.owner.token, c.Id.String()); read.Limit.MonthlyLimit != 1000000 || deref(read.CardHolderName) != "Alice L." || read.Status != "active" {
		t.Fatalf("refused changes changed the card: %+v", read)
	}
}

func TestCardFreezeAndUnfreeze(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	c := cardFor(t, s, o.id, o.alice.id, 1000)
	bobs := cardFor(t, s, o.id, o.bob.id, 100)

	// The cardholder freezes and unfreezes; each twice in a row is a conflict.
	frozen := cardAction(t, s, o.alice.token, c.Id.String(), "freeze")
	if !frozen.Frozen || frozen.Status != "active" {
		t.Fatalf("freeze answered %+v", frozen)
	}
	expectActions(t, "frozen", frozen, "order_physical", "unfreeze")
	s.Post(t, cardPath(c.Id.String(), "freeze"), o.alice.token, nil).ExpectError(t, 409, "conflict")
	s.Post(t, cardPath(c.Id.String(), "freeze"), o.owner.token, nil).ExpectError(t, 409, "conflict")
	if !getCard(t, s, o.alice.token, c.Id.String()).Frozen {
		t.Fatal("the card thawed by a refused freeze")
	}
	thawed := cardAction(t, s, o.alice.token, c.Id.String(), "unfreeze")
	if thawed.Frozen {
		t.Fatalf("unfreeze answered %+v", thawed)
	}
	expectActions(t, "unfrozen", thawed, "order_physical", "freeze")
	s.Post(t, cardPath(c.Id.String(), "unfreeze"), o.alice.token, nil).ExpectError(t, 409, "conflict")
	s.Post(t, cardPath(c.Id.String(), "unfreeze"), o.admin.token, nil).ExpectError(t, 409, "conflict")

	// Owners and admins may freeze anyone's card; another member cannot see it.
	if !cardAction(t, s, o.admin.token, c.Id.String(), "freeze").Frozen {
		t.Fatal("admin freeze")
	}
	if cardAction(t, s, o.owner.token, c.Id.String(), "unfreeze").Frozen {
		t.Fatal("owner unfreeze")
	}
	s.Post(t, cardPath(c.Id.String(), "freeze"), o.bob.token, nil).ExpectError(t, 404, "not_found")
	s.Post(t, cardPath(bobs.Id.String(), "unfreeze"), o.alice.token, nil).ExpectError(t, 404, "not_found")
	s.Post(t, cardPath(uuid.NewString(), "freeze"), o.owner.token, nil).ExpectError(t, 404, "not_found")
	if getCard(t, s, o.owner.token, c.Id.String()).Frozen {
		t.Fatal("a refused freeze froze the card")
	}

	// A card whose status is not active can be neither frozen nor unfrozen.
	for _, status := range []string{"inactive", "expired", "revoked"} {
		setCardStatus(t, s, c.Id.String(), status)
		s.Post(t, cardPath(c.Id.String(), "freeze"), o.owner.token, nil).ExpectError(t, 409, "conflict")
		s.Post(t, cardPath(c.Id.String(), "unfreeze"), o.owner.token, nil).ExpectError(t, 409, "conflict")
	}
	setCardStatus(t, s, c.Id.String(), "active")
	cardAction(t, s, o.alice.token, c.Id.String(), "freeze")
	setCardStatus(t, s, c.Id.String(), "inactive")
	s.Post(t, cardPath(c.Id.String(), "unfreeze"), o.alice.token, nil).ExpectError(t, 409, "conflict")
	s.Post(t, cardPath(c.Id.String(), "freeze"), o.alice.token, nil).ExpectError(t, 409, "conflict")
	if got := getCard(t, s, o.alice.token, c.Id.String()); !got.Frozen || got.Status != "inactive" {
		t.Fatalf("after refused changes: frozen %v status %s", got.Frozen, got.Status)
	}
}

// TestCardFreezeRacingUnfreeze: twenty calls alternating freeze and unfreeze on
// one card at once. Each answers 200 or 409 conflict; the successes
// alternate (freezes are unfreezes or one more), and the final state agrees.
func TestCardFreezeRacingUnfreeze(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	c := cardFor(t, s, o.id, o.alice.id, 1000)
	tokens := []string{o.owner.token, o.admin.token, o.alice.token}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		succeeded = map[string]int{}
		other     []string
	)
	for i := range 20 {
		action := "freeze"
		if i%2 == 1 {
			action = "unfreeze"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.Do(t, apitest.Request{Method: "POST", Path: cardPath(c.Id.String(), action), Bearer: tokens[i%len(tokens)], Header: oneShot})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Status == 200:
				succeeded[action]++
			case r.Status == 409 && strings.Contains(string(r.Body), `"conflict"`):
			default:
				other = append(other, action+": "+string(r.Body))
			}
		}()
	}
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("answers other than 200 or 409 conflict: %v", other)
	}
	f, u := succeeded["freeze"], succeeded["unfreeze"]
	final := getCard(t, s, o.owner.token, c.Id.String()).Frozen
	if f < 1 || f-u < 0 || f-u > 1 || final != (f-u == 1) {
		t.Fatalf("%d freezes and %d unfreezes succeeded, final frozen %v: not one consistent history", f, u, final)
	}
}

// TestCardsUnderOrganizationStatus: a paused organization's cards can be
// read and frozen, nothing else; a banned one's cannot be touched at all,
// and its authorizations are declined without moving money.
func TestCardsUnderOrganizationStatus(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "100.00")
	c := cardFor(t, s, o.id, o.owner.id, 1000)
	ordered := cardFor(t, s, o.id, o.owner.id, 1000)
	code := orderAndShip(t, s, o.owner.token, ordered.Id.String())
	frozen := cardFor(t, s, o.id, o.owner.id, 1000)
	cardAction(t, s, o.owner.token, frozen.Id.String(), "freeze")
	// Frozen, inactive and with a limit of 10: every other reason to decline holds.
	dead := cardFor(t, s, o.id, o.owner.id, 10)
	cardAction(t, s, o.owner.token, dead.Id.String(), "freeze")
	setCardStatus(t, s, dead.Id.String(), "inactive")
	alices := cardFor(t, s, o.id, o.alice.id, 10)
	feedBefore := len(feedRows(t, s, o.owner.token, o.id))

	setOrgStatus(t, s, o.id, "paused")
	getCard(t, s, o.owner.token, c.Id.String())
	getCard(t, s, o.alice.token, alices.Id.String())
	if n := len(listCards(t, s, o.owner.token, o.id, "").Data); n != 5 {
		t.Fatalf("paused list: %d cards", n)
	}
	if !cardAction(t, s, o.owner.token, c.Id.String(), "freeze").Frozen {
		t.Fatal("freeze while paused")
	}
	expectUnavailable(t, patchCard(t, s, o.owner.token, c.Id.String(), map[string]any{"monthly_limit": 5}))
	expectUnavailable(t, s.Post(t, cardPath(frozen.Id.String(), "unfreeze"), o.owner.token, nil))
	expectUnavailable(t, orderPhysical(t, s, o.owner.token, frozen.Id.String()))
	expectUnavailable(t, activate(t, s, o.owner.token, ordered.Id.String(), code))
	expectDecline(t, authorize(t, s, ordered.Id.String(), "1.00", "USD", "online", "purchase"), "organization_unavailable")
	if got := getCard(t, s, o.owner.token, c.Id.String()); got.Limit.MonthlyLimit != 1000 {
		t.Fatalf("paused PATCH changed the limit: %+v", got.Limit)
	}
	if got := getCard(t, s, o.owner.token, frozen.Id.String()); !got.Frozen || got.Physical.State != "none" {
		t.Fatalf("paused unfreeze or order changed the card: %+v", got)
	}
	if got := getCard(t, s, o.owner.token, ordered.Id.String()); got.Physical.State != "awaiting_activation" {
		t.Fatalf("paused activate changed the card: %+v", got.Physical)
	}

	setOrgStatus(t, s, o.id, "banned")
	expectUnavailable(t, s.Get(t, cardPath(c.Id.String(), ""), o.owner.token))
	expectUnavailable(t, s.Get(t, "/api/v1/organizations/"+o.id+"/cards", o.owner.token))
	expectUnavailable(t, s.Post(t, cardPath(ordered.Id.String(), "freeze"), o.owner.token, nil))
	expectUnavailable(t, s.Post(t, cardPath(c.Id.String(), "unfreeze"), o.owner.token, nil))
	expectUnavailable(t, patchCard(t, s, o.owner.token, c.Id.String(), map[string]any{"monthly_limit": 5}))
	expectUnavailable(t, orderPhysical(t, s, o.owner.token, frozen.Id.String()))
	expectUnavailable(t, activate(t, s, o.owner.token, ordered.Id.String(), code))
	expectUnavailable(t, s.Post(t, cardPath(ordered.Id.String(), "pin"), o.owner.token, map[string]any{"pin": "4821"}))
	expectUnavailable(t, s.Post(t, cardPath(c.Id.String(), "mobile-wallet-provision"), o.owner.token, map[string]any{}))
	expectUnavailable(t, s.Get(t, cardPath(alices.Id.String(), ""), o.alice.token))
	// Declined for the organization first, although the card is also inactive, frozen and over the limit.
	expectDecline(t, authorize(t, s, dead.Id.String(), "5000.00", "USD", "atm", "purchase"), "organization_unavailable")
	expectDecline(t, authorize(t, s, ordered.Id.String(), "1.00", "USD", "online", "purchase"), "organization_unavailable")
	expectDecline(t, authorize(t, s, ordered.Id.String(), "1.00", "USD", "online", "refund"), "organization_unavailable")

	setOrgStatus(t, s, o.id, "active")
	if av, _ := balance(t, s, o.owner.token, o.id, "USD"); av != "100.00" {
		t.Fatalf("declined authorizations moved money: USD available %s", av)
	}
	if n := len(feedRows(t, s, o.owner.token, o.id)); n != feedBefore {
		t.Fatalf("declined authorizations added %d feed rows", n-feedBefore)
	}
	if got := getCard(t, s, o.owner.token, ordered.Id.String()); got.Limit.SpentThisMonth != "0.00" || got.Frozen {
		t.Fatalf("after the ban: %+v", got)
	}
}

// TestCardOperationsRefuseAPIKeys: every card operation is for people; an
// API key gets 403 api_key_not_permitted and changes nothing.
func TestCardOperationsRefuseAPIKeys(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	c := cardFor(t, s, o.id, o.owner.id, 1000)
	keyBody := map[string]any{"name": "Card sync", "role": "admin", "scopes": []string{"balances:read", "transactions:read"}}
	keys := "/api/v1/organizations/" + o.id + "/api-keys"
	stepUpByCode(t, s, o.owner.token, o.owner.secret, s.Post(t, keys, o.owner.token, keyBody))
	var k api.ApiKeyWithSecret
	s.Post(t, keys, o.owner.token, keyBody).ExpectStatus(t, http.StatusCreated).Decode(t, &k)

	for _, req := range []apitest.Request{
		{Method: "GET", Path: "/api/v1/organizations/" + o.id + "/cards"},
		{Method: "GET", Path: cardPath(c.Id.String(), "")},
		{Method: "PATCH", Path: cardPath(c.Id.String(), ""), Body: map[string]any{"monthly_limit": 1}},
		{Method: "POST", Path: cardPath(c.Id.String(), "freeze")},
		{Method: "POST", Path: cardPath(c.Id.String(), "unfreeze")},
		{Method: "POST", Path: cardPath(c.Id.String(), "physical"), Body: map[string]any{"shipping_address": shippingAddress()}},
		{Method: "POST", Path: cardPath(c.Id.String(), "activate"), Body: map[string]any{"activation_code": "482913"}},
		{Method: "POST", Path: cardPath(c.Id.String(), "pin"), Body: map[string]any{"pin": "4821"}},
		{Method: "POST", Path: cardPath(c.Id.String(), "mobile-wallet-provision"), Body: map[string]any{"server_session_id": "s1"}},
	} {
		req.Bearer = k.Secret
		s.Do(t, req).ExpectError(t, 403, "api_key_not_permitted")
	}
	got := getCard(t, s, o.owner.token, c.Id.String())
	if got.Frozen || got.Limit.MonthlyLimit != 1000 || got.Physical.State != "none" {
		t.Fatalf("the key changed the card: %+v", got)
	}
}
