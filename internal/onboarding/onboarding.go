// Package onboarding holds what a new customer goes through before banking
// (docs/api.md, Onboarding): the personal questionnaire's fixed options, the
// organization's acknowledgement of its auto-assigned subscription plan, and
// each person's identity check, run by an identity-verification provider
// behind IdentityProvider.
package onboarding

import (
	"time"

	"github.com/google/uuid"
)

// Option is one answer a questionnaire question offers.
type Option struct {
	// ID is derived from the option's list and value (UUIDv5), so it is the
	// same on every instance and after every restart.
	ID    uuid.UUID
	Label string
	Value string
}

// PersonalOptions are the answers the personal questionnaire offers.
type PersonalOptions struct {
	MonthlyVolumes []Option
	Occupations    []Option
	Purposes       []Option
	SourceOfFunds  []Option
}

// optionNamespace is the UUIDv5 namespace of questionnaire option ids. It
// must never change: clients keep the ids.
var optionNamespace = uuid.MustParse("6f0a3b2e-5c1d-4e8f-9a7b-2d4c6e8f0a1b")

// optionID is the id of value in the personal list named list.
func optionID(list, value string) uuid.UUID {
	return uuid.NewSHA1(optionNamespace, []byte("personal/"+list+"/"+value))
}

func options(list string, pairs ...[2]string) []Option {
	out := make([]Option, len(pairs))
	for i, p := range pairs {
		out[i] = Option{ID: optionID(list, p[1]), Label: p[0], Value: p[1]}
	}
	return out
}

// personal is built once: the lists are fixed.
var personal = PersonalOptions{
	MonthlyVolumes: options("monthly_volumes",
		[2]string{"Less than $10,000", "under_10k"},
		[2]string{"$10,000 to $50,000", "10k_50k"},
		[2]string{"$50,000 to $250,000", "50k_250k"},
		[2]string{"$250,000 to $1,000,000", "250k_1m"},
		[2]string{"More than $1,000,000", "over_1m"},
	),
	Occupations: options("occupations",
		[2]string{"Founder or owner", "founder_owner"},
		[2]string{"Executive or director", "executive_director"},
		[2]string{"Finance or accounting", "finance_accounting"},
		[2]string{"Operations", "operations"},
		[2]string{"Engineering or product", "engineering_product"},
		[2]string{"Sales or marketing", "sales_marketing"},
		[2]string{"Legal or compliance", "legal_compliance"},
		[2]string{"Other", "other"},
	),
	Purposes: options("purposes",
		[2]string{"Paying suppliers and bills", "pay_suppliers"},
		[2]string{"Receiving payments from customers", "receive_payments"},
		[2]string{"Paying employees and contractors", "payroll"},
		[2]string{"Card spending and expenses", "card_spending"},
		[2]string{"Holding and converting currencies", "treasury"},
		[2]string{"Other", "other"},
	),
	SourceOfFunds: options("source_of_funds",
		[2]string{"Revenue from business activity", "business_revenue"},
		[2]string{"Investment or venture funding", "investment"},
		[2]string{"Loans or credit", "loans"},
		[2]string{"Personal savings of the owners", "owner_savings"},
		[2]string{"Grants", "grants"},
		[2]string{"Other", "other"},
	),
}

// Acknowledgement is an organization's acknowledgement of the subscription
// plan it was assigned.
type Acknowledgement struct {
	OrganizationID uuid.UUID
	// Required is whether the organization must acknowledge its plan (new
	// organizations do).
	Required bool
	// AcknowledgedAt is when it was first acknowledged; later
	// acknowledgements keep it. Nil until then.
	AcknowledgedAt *time.Time
}

// Statuses of a person's identity check.
const (
	NotStarted = "not_started"
	Pending    = "pending"
	Approved   = "approved"
	Rejected   = "rejected"
)

// Decisions lists the outcomes a check can be given (the sandbox's choice).
var Decisions = []string{Approved, Rejected}

// IdentityCheck is where a person's identity check stands.
type IdentityCheck struct {
	Status string
	// UpdatedAt is when the status last changed; nil while not started.
	UpdatedAt *time.Time
}

// AccessToken is what the identity-verification provider hands out for one
// person's check: the token its SDK takes and the link of its web SDK.
type AccessToken struct {
	Token      string
	WebSDKLink string
}
