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

		{"POST", "/api/v1/sandbox/organizations", authSandbox, limitDefault, s.sandboxCreateOrganization},
		{"POST", "/api/v1/sandbox/organizations/{organization_id}/users", authSandbox, limitDefault, s.sandboxAddUser},
		{"POST", "/api/v1/sandbox/organizations/{organization_id}/status", authSandbox, limitDefault, s.sandboxSetStatus},
		{"POST", "/api/v1/sandbox/organizations/{organization_id}/entity", authSandbox, limitDefault, s.sandboxSetEntity},
		{"POST", "/api/v1/sandbox/clock/advance", authSandbox, limitDefault, s.sandboxAdvanceClock},
		{"GET", "/api/v1/sandbox/outbox", authSandbox, limitDefault, s.sandboxOutbox},
	}
}
