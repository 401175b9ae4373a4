// Package sandbox is the world outside the service as environment `test`
// plays it (docs/api.md, The sandbox), gathered in one place. A feature
// declares the port it reaches an outside system through (an interface) and
// keeps the live implementation, if any; the stand-ins live here, one file
// per outside system, and internal/app wires them only in `test` (the rates
// everywhere, until a live provider exists):
//
//   - issuer.go: the card-issuing network (card.Issuer and card.LetterKeeper):
//     test card numbers under sandbox BINs, each network's token service key
//     for wallet payloads, and activation letters kept until the card ships.
//   - partner.go: the banking partner that opens currency accounts
//     (mca.Partner), configurable through POST /api/v1/sandbox/partner.
//   - identityprovider.go: the identity-verification provider
//     (onboarding.IdentityProvider): signed tokens, and the verification
//     the sandbox's identity-check page (/sandbox/kyc) runs.
//   - approvingapp.go: the approving app on a person's phone: a credential
//     whose key the server holds (stepup's held-key credential), answering
//     challenges through the approving flow.
//   - rates.go: the market-data provider of exchange rates (payment.Rates,
//     card.Rates): a fixed table.
//   - sandbox.go: the helpers that set a scene without a bank: organizations
//     and users, an organization's status and business verification,
//     deposits, the manual clock and the outbox.
//
// What the outside systems tell the service goes through the features' own
// operations, which the sandbox's routes call directly: the card network's
// issuing, status, shipping and authorizations (card, internal/flow/cardspend),
// the partner's webhooks (mca), the rail's settlement (internal/flow/billpay),
// crypto deposits (invoicing) and identity-check decisions (onboarding). The
// HTTP side of it all, the routes and the identity-check page, is
// internal/httpapi/sandbox.go.
package sandbox
