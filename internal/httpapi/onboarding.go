package httpapi

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/onboarding"
)

// The onboarding feature's resources: what each operation's path names
// first, and the record of its answer.
var (
	personalOptions     = resource[onboarding.PersonalOptions, personalOptionsRecord]{record: newPersonalOptionsRecord}
	acknowledgements    = resource[onboarding.Acknowledgement, subscriptionAcknowledgementRecord]{at: organizationID, record: newSubscriptionAcknowledgementRecord}
	identityCheckTokens = resource[onboarding.AccessToken, identityCheckTokenRecord]{record: newIdentityCheckTokenRecord}.optionalBody()
	identityChecks      = resource[onboarding.IdentityCheck, identityCheckRecord]{at: userID, record: newIdentityCheckRecord}
	userID              = param{"user_id", "User"}
)

type questionnaireOptionRecord struct {
	ID    uuid.UUID `json:"id"`
	Label string    `json:"label"`
	Value string    `json:"value"`
}

type personalOptionsRecord struct {
	MonthlyVolumes []questionnaireOptionRecord `json:"monthly_volumes"`
	Occupations    []questionnaireOptionRecord `json:"occupations"`
	Purposes       []questionnaireOptionRecord `json:"purposes"`
	SourceOfFunds  []questionnaireOptionRecord `json:"source_of_funds"`
}

func optionRecords(os []onboarding.Option) []questionnaireOptionRecord {
	out := make([]questionnaireOptionRecord, len(os))
	for i, o := range os {
		out[i] = questionnaireOptionRecord(o)
	}
	return out
}

func newPersonalOptionsRecord(p onboarding.PersonalOptions) personalOptionsRecord {
	return personalOptionsRecord{MonthlyVolumes: optionRecords(p.MonthlyVolumes),
		Occupations: optionRecords(p.Occupations), Purposes: optionRecords(p.Purposes), SourceOfFunds: optionRecords(p.SourceOfFunds)}
}

// personalOptions are the same for everyone.
func (s *server) personalOptions(context.Context, actor.Actor) (onboarding.PersonalOptions, error) {
	return s.Onboarding.Personal(), nil
}

type subscriptionAcknowledgementRecord struct {
	OrganizationID                      uuid.UUID  `json:"organization_id"`
	RequiresSubscriptionAcknowledgement bool       `json:"requires_subscription_acknowledgement"`
	SubscriptionAcknowledgedAt          *time.Time `json:"subscription_acknowledged_at"`
}

func newSubscriptionAcknowledgementRecord(a onboarding.Acknowledgement) subscriptionAcknowledgementRecord {
	return subscriptionAcknowledgementRecord{OrganizationID: a.OrganizationID, RequiresSubscriptionAcknowledgement: a.Required,
		SubscriptionAcknowledgedAt: a.AcknowledgedAt}
}

type identityCheckTokenRecord struct {
	AccessToken string `json:"access_token"`
	WebSDKLink  string `json:"websdk_link"`
}

func newIdentityCheckTokenRecord(t onboarding.AccessToken) identityCheckTokenRecord {
	return identityCheckTokenRecord{AccessToken: t.Token, WebSDKLink: t.WebSDKLink}
}

// identityCheckToken asks for an identity-check token, noting the
// organization the body names, if any, for the access log. Without a body
// the token is asked outside any organization.
func (s *server) identityCheckToken(ctx context.Context, a actor.Actor, req onboarding.AccessTokenRequest) (onboarding.AccessToken, error) {
	if req.OrganizationID != nil {
		noteOrganization(ctx, req.OrganizationID.String())
	}
	return s.Onboarding.AccessToken(ctx, a, req)
}

type identityCheckRecord struct {
	Status    string     `json:"status"`
	UpdatedAt *time.Time `json:"updated_at"`
}

func newIdentityCheckRecord(c onboarding.IdentityCheck) identityCheckRecord {
	return identityCheckRecord(c)
}
