package audit

import "slices"

// Actions: what an entry records, `record.verb` (docs/api.md, Audit log,
// lists them; a new one is added here and there).
const (
	SessionCreated         = "session.created"
	SessionEnded           = "session.ended"
	StepUpVerified         = "step_up.verified"
	StepUpDeclined         = "step_up.declined"
	AuthenticatorActivated = "authenticator.activated"
	PasskeyRegistered      = "passkey.registered"
	ApprovingAppRegistered = "approving_app.registered"

	APIKeyCreated = "api_key.created"
	APIKeyUpdated = "api_key.updated"
	APIKeyRotated = "api_key.rotated"
	APIKeyRevoked = "api_key.revoked"

	WebhookEndpointCreated       = "webhook_endpoint.created"
	WebhookEndpointUpdated       = "webhook_endpoint.updated"
	WebhookEndpointDeleted       = "webhook_endpoint.deleted"
	WebhookEndpointSecretRotated = "webhook_endpoint.secret_rotated"
	WebhookDeliveryRetried       = "webhook_delivery.retried"

	PaymentExecuted  = "payment.executed"
	PaymentCancelled = "payment.cancelled"
	PaymentSettled   = "payment.settled"
	ApprovalApproved = "approval.approved"
	ApprovalRejected = "approval.rejected"

	CardUpdated  = "card.updated"
	CardFrozen   = "card.frozen"
	CardUnfrozen = "card.unfrozen"

	CardIssued          = "card.issued"
	CardPhysicalOrdered = "card.physical_ordered"
	CardActivated       = "card.activated"
	CardPINSet          = "card.pin_set"
	CardStatusChanged   = "card.status_changed"
	CardShipped         = "card.shipped"

	PaymentRequestCreated   = "payment_request.created"
	PaymentRequestCancelled = "payment_request.cancelled"
	PaymentRequestAccepted  = "payment_request.accepted"
	PaymentRequestDeclined  = "payment_request.declined"

	PaymentContactCreated = "payment_contact.created"

	BillCreated   = "bill.created"
	BillUpdated   = "bill.updated"
	BillCancelled = "bill.cancelled"

	ExpenseSubmitted  = "expense.submitted"
	ExpenseApproved   = "expense.approved"
	ExpenseRejected   = "expense.rejected"
	ExpenseMarkedPaid = "expense.marked_paid"

	InvoiceSubmitted   = "invoice.submitted"
	InvoiceApproved    = "invoice.approved"
	InvoiceReturned    = "invoice.returned"
	InvoiceSent        = "invoice.sent"
	InvoiceFinalized   = "invoice.finalized"
	InvoiceDeallocated = "invoice.deallocated"

	OrganizationCreated             = "organization.created"
	OrganizationStatusChanged       = "organization.status_changed"
	OrganizationEntityStatusChanged = "organization.entity_status_changed"
	MemberAdded                     = "member.added"
	DepositCreated                  = "deposit.created"
)

// Actions lists every action, for the list's filter and the docs.
var Actions = []string{
	SessionCreated, SessionEnded, StepUpVerified, StepUpDeclined, AuthenticatorActivated, PasskeyRegistered, ApprovingAppRegistered,
	APIKeyCreated, APIKeyUpdated, APIKeyRotated, APIKeyRevoked,
	WebhookEndpointCreated, WebhookEndpointUpdated, WebhookEndpointDeleted, WebhookEndpointSecretRotated, WebhookDeliveryRetried,
	PaymentExecuted, PaymentCancelled, PaymentSettled, ApprovalApproved, ApprovalRejected,
	CardIssued, CardUpdated, CardFrozen, CardUnfrozen, CardPhysicalOrdered, CardActivated, CardPINSet, CardStatusChanged, CardShipped,
	PaymentContactCreated, BillCreated, BillUpdated, BillCancelled,
	ExpenseSubmitted, ExpenseApproved, ExpenseRejected, ExpenseMarkedPaid,
	InvoiceSubmitted, InvoiceApproved, InvoiceReturned, InvoiceSent, InvoiceFinalized, InvoiceDeallocated,
	PaymentRequestCreated, PaymentRequestCancelled, PaymentRequestAccepted, PaymentRequestDeclined,
	OrganizationCreated, OrganizationStatusChanged, OrganizationEntityStatusChanged, MemberAdded, DepositCreated,
}

func known(action string) bool { return slices.Contains(Actions, action) }
