package sandbox_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/mca"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/sandbox"
)

// The stand-ins implement the ports of the features they replace.
var (
	_ card.Issuer       = sandbox.Issuer{}
	_ card.LetterKeeper = sandbox.Issuer{}
	_ card.Rates        = sandbox.Rates{}
	_ mca.Partner       = (*sandbox.Partner)(nil)
)

// The partner offers EUR, GBP and USD, provisions a first account, attaches
// one to a business with an active account, refuses what it does not offer,
// and fails as told.
func TestPartnerAnswersAsConfigured(t *testing.T) {
	ctx, org := context.Background(), uuid.New()
	p := sandbox.NewPartner()
	if got, err := p.Offered(ctx, org); err != nil || !slices.Equal(got, []string{"EUR", "GBP", "USD"}) {
		t.Fatalf("offered = %v, %v", got, err)
	}
	for _, c := range []struct {
		currency string
		active   bool
		want     mca.Opening
	}{{"EUR", false, mca.Provisioning}, {"EUR", true, mca.Opened}, {"JPY", true, mca.Refused}} {
		if got, err := p.Open(ctx, org, c.currency, c.active); err != nil || got != c.want {
			t.Errorf("open %s (active %v) = %q, %v; want %q", c.currency, c.active, got, err, c.want)
		}
	}
	yes := true
	s := p.Configure([]string{"USD", "CHF"}, &yes, nil)
	if !slices.Equal(s.OfferedCurrencies, []string{"CHF", "USD"}) || !s.Unavailable || s.EligibilityError {
		t.Fatalf("settings = %+v", s)
	}
	if _, err := p.Open(ctx, org, "CHF", false); !errors.Is(err, mca.ErrUnavailable) {
		t.Errorf("open while unavailable: %v, want mca.ErrUnavailable", err)
	}
	p.Configure(nil, nil, &yes)
	if _, err := p.Offered(ctx, org); err == nil {
		t.Error("the eligibility read succeeded though told to fail")
	}
}

// Rates are the fixed table's, the same currency is 1, and a currency
// outside the table has no rate.
func TestRatesAreFixed(t *testing.T) {
	ctx := context.Background()
	for _, c := range [][3]string{{"EUR", "USD", "1.0834000000"}, {"USD", "USD", "1"}, {"USD", "JPY", "149.4768310912"}} {
		if got, err := (sandbox.Rates{}).Rate(ctx, c[0], c[1]); err != nil || got != c[2] {
			t.Errorf("rate %s to %s = %q, %v; want %s", c[0], c[1], got, err, c[2])
		}
	}
	if _, err := (sandbox.Rates{}).Rate(ctx, "USD", "XAU"); err == nil {
		t.Error("a currency outside the table has a rate")
	}
}

var pan = regexp.MustCompile(`^[0-9]{16}$`)

// luhnValid reports whether digits pass the Luhn check.
func luhnValid(digits string) bool {
	sum, double := 0, false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum, double = sum+d, !double
	}
	return sum%10 == 0
}

// The issuer numbers cards under its BINs, keeps one token service key per
// network, and hands an activation letter over once.
func TestIssuer(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		issuer := sandbox.Issuer{DB: d, Keys: fixture.Keys(t)}
		for provider, bin := range map[string]string{card.Visa: "400000", card.Mastercard: "510000"} {
			n, err := issuer.NewCardNumber(ctx, provider)
			if err != nil || !pan.MatchString(n) || !strings.HasPrefix(n, bin) || !luhnValid(n) {
				t.Errorf("%s card number %q, %v", provider, n, err)
			}
		}
		if _, err := issuer.NewCardNumber(ctx, "other"); err == nil {
			t.Error("an unknown provider got a card number")
		}

		private, err := issuer.ProviderPrivateKey(ctx, "visa")
		if err != nil {
			t.Fatal(err)
		}
		public, err := issuer.TokenServiceKey(ctx, "visa")
		if err != nil || public.KeyID != private.KeyID || !public.IsPublic() || !strings.HasPrefix(public.KeyID, "visa-") {
			t.Fatalf("token service key %q (public %v), %v; private %q", public.KeyID, public.IsPublic(), err, private.KeyID)
		}
		if other, err := issuer.ProviderPrivateKey(ctx, "mastercard"); err != nil || other.KeyID == private.KeyID {
			t.Errorf("mastercard key %q, %v: want its own", other.KeyID, err)
		}

		org, _ := fixture.Member(t, d, organization.Member)
		cards := &card.Service{DB: d, Keys: fixture.Keys(t), Issuer: issuer, Rates: sandbox.Rates{}}
		limit := int64(100)
		c, err := cards.Issue(ctx, org.ID, card.IssueRequest{MonthlyLimit: &limit})
		if err != nil {
			t.Fatal(err)
		}
		take := func() string {
			t.Helper()
			code, err := db.InTx(ctx, d, func(tx *db.Tx) (string, error) { return issuer.TakeActivationLetter(ctx, tx, c.ID) })
			if err != nil {
				t.Fatal(err)
			}
			return code
		}
		if err := d.Tx(ctx, func(tx *db.Tx) error { return issuer.SendActivationLetter(ctx, tx, c.ID, "123456") }); err != nil {
			t.Fatal(err)
		}
		if got := take(); got != "123456" {
			t.Errorf("letter = %q, want 123456", got)
		}
		if got := take(); got != "" {
			t.Errorf("letter taken twice: %q", got)
		}
	})
}
