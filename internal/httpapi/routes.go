package httpapi

// routes lists the whole HTTP surface, one line per operation. The OpenAPI
// document (api/openapi.yaml) describes exactly these operations; a test keeps
// the two in step.
func (s *server) routes() []route {
	return []route{
		{"GET", "/healthz", authNone, limitDefault, s.healthz},
		{"GET", "/readyz", authNone, limitDefault, s.readyz},
		{"GET", "/metrics", authNone, limitDefault, s.metricsHandler},
		{"GET", "/api/v1/openapi.json", authNone, limitDefault, s.openapi},

		{"POST", "/api/v1/auth/sign-in", authNone, limitSignIn, s.signIn},
		{"POST", "/api/v1/auth/mfa", authNone, limitSignIn, s.mfa},
		{"POST", "/api/v1/auth/sign-in/totp/setup", authNone, limitSignIn, s.signInTOTPSetup},
		{"POST", "/api/v1/auth/sign-in/totp/activate", authNone, limitSignIn, s.signInTOTPActivate},
		{"POST", "/api/v1/auth/sign-out", authNone, limitDefault, s.signOut},
		{"POST", "/api/v1/auth/totp/setup", authSession, limitDefault, s.totpSetup},
		{"POST", "/api/v1/auth/totp/activate", authSession, limitDefault, s.totpActivate},
		{"GET", "/api/v1/me", authSession, limitDefault, s.me},
		{"GET", "/api/v1/devices", authSession, limitDefault, s.devices},
		{"GET", "/api/v1/auth/passkeys", authSession, limitDefault, s.passkeys},
		{"POST", "/api/v1/auth/passkeys/registration", authSession, limitDefault, s.beginPasskeyRegistration},
		{"POST", "/api/v1/auth/passkeys", authSession, limitDefault, s.registerPasskey},
		{"DELETE", "/api/v1/auth/passkeys/{passkey_id}", authSession, limitDefault, s.removePasskey},

		{"GET", "/api/v1/auth/step-up/{sudo_session_id}", authSession, limitDefault, s.stepUpStatus},
		{"POST", "/api/v1/auth/step-up/complete", authSession, limitDefault, s.completeStepUp},
		{"POST", "/api/v1/auth/step-up/fallback", authSession, limitDefault, s.stepUpFallback},
		{"POST", "/api/v1/auth/step-up/exit", authSession, limitDefault, s.exitStepUp},
		{"POST", "/api/v1/me/approval-credential", authSession, limitDefault, s.registerApprovalCredential},
		{"GET", "/api/v1/me/challenges", authSession, limitDefault, s.challenges},
		{"POST", "/api/v1/me/challenges/{challenge_id}/approve", authSession, limitDefault, s.approveChallenge},
		{"POST", "/api/v1/me/challenges/{challenge_id}/decline", authSession, limitDefault, s.declineChallenge},

		{"POST", "/api/v1/organizations/{organization_id}/api-keys", authSession, limitDefault, s.createAPIKey},
		{"GET", "/api/v1/organizations/{organization_id}/api-keys", authSession, limitDefault, s.listAPIKeys},
		{"PATCH", "/api/v1/organizations/{organization_id}/api-keys/{api_key_id}", authSession, limitDefault, s.updateAPIKey},
		{"POST", "/api/v1/organizations/{organization_id}/api-keys/{api_key_id}/rotate", authSession, limitDefault, s.rotateAPIKey},
		{"POST", "/api/v1/organizations/{organization_id}/api-keys/{api_key_id}/revoke", authSession, limitDefault, s.revokeAPIKey},
		{"GET", "/api/v1/organizations/{organization_id}/multi-currency-accounts", authSessionOrKey, limitDefault, s.listCurrencyAccounts},
		{"POST", "/api/v1/organizations/{organization_id}/multi-currency-accounts", authSession, limitDefault, s.requestCurrencyAccounts},
		{"POST", "/api/v1/partner/webhooks", authNone, limitDefault, s.partnerWebhook},

		{"GET", "/api/v1/organizations/{organization_id}/balances", authSession, limitDefault, s.balances},
		{"GET", "/api/v1/organizations/{organization_id}/transactions", authSession, limitDefault, s.listTransactions},
		{"GET", "/api/v1/organizations/{organization_id}/transactions/{transaction_id}", authSession, limitDefault, s.getTransaction},
		{"GET", "/api/v1/organizations/{organization_id}/payments/config", authSession, limitDefault, s.paymentsConfig},
		{"POST", "/api/v1/organizations/{organization_id}/payment-contacts", authSession, limitDefault, s.createContact},
		{"GET", "/api/v1/organizations/{organization_id}/payment-contacts", authSession, limitDefault, s.listContacts},
		{"GET", "/api/v1/payment-contacts/{payment_contact_id}", authSession, limitDefault, s.getContact},
		{"POST", "/api/v1/payments/preflight", authSession, limitDefault, s.preflight},
		{"POST", "/api/v1/payments/execute", authSession, limitDefault, s.executePayment},
		{"GET", "/api/v1/payments/{payment_id}", authSession, limitDefault, s.getPayment},
		{"POST", "/api/v1/payments/{payment_id}/cancel", authSession, limitDefault, s.cancelPayment},
		{"POST", "/api/v1/payment-batches", authSession, limitDefault, s.createBatch},
		{"GET", "/api/v1/payment-batches/{batch_id}", authSession, limitDefault, s.getBatch},
		{"GET", "/api/v1/organizations/{organization_id}/approvals", authSession, limitDefault, s.listApprovals},
		{"POST", "/api/v1/approvals/{approval_id}/approve", authSession, limitDefault, s.approveApproval},
		{"POST", "/api/v1/approvals/{approval_id}/reject", authSession, limitDefault, s.rejectApproval},

		{"POST", "/api/v1/sandbox/organizations", authSandbox, limitDefault, s.sandboxCreateOrganization},
		{"POST", "/api/v1/sandbox/organizations/{organization_id}/users", authSandbox, limitDefault, s.sandboxAddUser},
		{"POST", "/api/v1/sandbox/organizations/{organization_id}/status", authSandbox, limitDefault, s.sandboxSetStatus},
		{"POST", "/api/v1/sandbox/organizations/{organization_id}/entity", authSandbox, limitDefault, s.sandboxSetEntity},
		{"POST", "/api/v1/sandbox/clock/advance", authSandbox, limitDefault, s.sandboxAdvanceClock},
		{"GET", "/api/v1/sandbox/outbox", authSandbox, limitDefault, s.sandboxOutbox},
		{"POST", "/api/v1/sandbox/partner", authSandbox, limitDefault, s.sandboxPartner},
		{"POST", "/api/v1/sandbox/organizations/{organization_id}/deposits", authSandbox, limitDefault, s.sandboxDeposit},
		{"POST", "/api/v1/sandbox/payments/{payment_id}/settle", authSandbox, limitDefault, s.sandboxSettle},
		{"POST", "/api/v1/sandbox/partner/webhook", authSandbox, limitDefault, s.sandboxPartnerWebhook},
	}
}
