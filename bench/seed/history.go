package main

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// spread returns the instant of the j-th of n events between begin+2h and now.
func (g *generator) spread(begin time.Time, j, n int) time.Time {
	span := g.cfg.Now.Add(-time.Hour).Sub(begin.Add(2 * time.Hour))
	return begin.Add(2*time.Hour + time.Duration(int64(span)/int64(n+1)*int64(j+1)))
}

// payments writes each organization's payments with their quote, approval,
// domain event, money movement and feed row, and the step-up (sudo session,
// step-up authentication, assurance challenge) that approved or refused it.
// One payment in ten also has an identity step-up of its creator, and one
// in ten an idempotency record and a finished job.
//
// The payments of all organizations are written in time order (ids are
// time-ordered), so every index on an id grows at its end.
func (g *generator) payments(begin time.Time) error {
	b := g.b
	total := g.cfg.Rows
	next := make([]int, len(g.orgs)) // each organization's next payment number
	for k := range total {
		o, oi := g.payer(k)
		j := next[oi]
		next[oi]++
		{
			t := g.spread(begin, k, total)
			who := j % len(o.users)
			user, session := o.users[who], o.sessions[who]
			amount := int64(1000 + rnd(maxAmount-1000))
			quote, approval, payment, event := idAt(t), idAt(t), idAt(t), idAt(t)
			status, approvalStatus, challengeStatus := "completed", "approved", "consumed"
			switch j % 100 {
			case 0:
				status, approvalStatus, challengeStatus = "awaiting_approval", "pending", "expired"
				if j >= o.payments-100 { // only the latest are still waiting for the app
					challengeStatus = "pending"
				}
			case 1:
				status, approvalStatus, challengeStatus = "rejected", "rejected", "declined"
			case 2:
				status, approvalStatus, challengeStatus = "cancelled", "cancelled", "expired"
			case 3:
				status = "processing"
			case 4:
				challengeStatus = "satisfied" // approved by authenticator code: the app's challenge was satisfied, not consumed
			}
			if err := b.add("quotes", "id, organization_id, payment_contact_id, rail, source_amount, source_currency, destination_amount, destination_currency, fee_amount, fee_currency, rate, created_by_id, expires_at, used_at, inserted_at",
				quote, o.id, o.contact, "fiat", amount, "EUR", amount, "EUR", 0, "EUR", "1", user, t.Add(10*time.Minute), t, t); err != nil {
				return err
			}
			decided := t.Add(2 * time.Minute)
			var decidedBy, decidedAt any = user, decided
			if approvalStatus == "pending" {
				decidedBy, decidedAt = nil, nil
			}
			if err := b.add("approvals", "id, organization_id, kind, target_id, status, requested_by_id, decided_by_id, decided_at, reason, inserted_at",
				approval, o.id, "payment", payment.String(), approvalStatus, user, decidedBy, decidedAt, nil, t); err != nil {
				return err
			}
			var feed, entry any
			if approvalStatus == "approved" {
				e, f, err := g.moveIDs(o, "fiat_outgoing", "out", amount, "EUR", "Payment to Müller Maschinenbau GmbH", payment, decided)
				if err != nil {
					return err
				}
				feed, entry = f, e
			}
			var railState any
			if status == "processing" || status == "completed" {
				railState = "submitted"
			}
			if err := b.add("payments", "id, organization_id, quote_id, bill_id, payment_contact_id, payment_batch_id, approval_request_id, transaction_id, rail, status, rail_state, tag, debited_amount, debited_currency, delivered_amount, delivered_currency, fee_amount, payout_reason, statement_description, internal_notes, debit_entry_id, fee_entry_id, event_id, event_stream, event_type, created_by_id, inserted_at, updated_at",
				payment, o.id, quote, nil, o.contact, nil, approval, feed, "fiat", status, railState, nil, amount, "EUR", amount, "EUR", 0,
				"PYR002", fmt.Sprintf("Invoice %d", j), nil, entry, nil, event, "payment-"+payment.String(), "payment.created", user, t, decided); err != nil {
				return err
			}
			if err := b.add("domain_events", "id, organization_id, stream, aggregate_id, type, data, occurred_at",
				event, o.id, "payment-"+payment.String(), payment.String(), "payment.created",
				fmt.Sprintf(`{"payment_id":%q,"organization_id":%q,"rail":"fiat","debited":{"amount":%d,"currency":"EUR"}}`, payment, o.id, amount), t); err != nil {
				return err
			}
			sudo := map[string]string{"pending": "pending", "declined": "declined"}[challengeStatus]
			if sudo == "" {
				sudo = "expired"
			}
			if err := g.stepUp(user, session, "payment_approval", approval, sudo, challengeStatus, t.Add(time.Minute)); err != nil {
				return err
			}
			if j%10 == 5 {
				st := []string{"satisfied", "expired", "declined", "consumed"}[j/10%4]
				sudoStatus := map[string]string{"declined": "declined"}[st]
				if sudoStatus == "" {
					sudoStatus = "expired"
				}
				if err := g.stepUp(user, session, "identity", uuid.Nil, sudoStatus, st, t.Add(-time.Minute)); err != nil {
					return err
				}
			}
			if j%10 == 7 {
				if err := b.add("idempotency_keys", "scope, key, input_hash, result, expires_at, inserted_at",
					"payments.execute:"+user.String(), randomHex(16), randomHex(32), fmt.Sprintf(`{"status":201,"payment_id":%q}`, payment), t.Add(24*time.Hour), t); err != nil {
					return err
				}
				if err := b.add("jobs", "id, kind, payload, status, attempts, max_attempts, run_at, locked_until, last_error, inserted_at, updated_at",
					idAt(t), "outbox.deliver", fmt.Sprintf(`{"message_id":%q}`, idAt(t)), "done", 1, 10, t, nil, nil, t, t.Add(time.Second)); err != nil {
					return err
				}
			}
			if (k+1)%100_000 == 0 {
				g.logf("%d payments", k+1)
			}
		}
	}
	return nil
}

// payer says whose is the k-th payment of the history: every tenth is the
// heavy organization's, the others go round the other organizations.
func (g *generator) payer(k int) (*org, int) {
	if k%10 == 0 {
		return g.orgs[0], 0
	}
	i := 1 + (k-k/10-1)%(len(g.orgs)-1)
	return g.orgs[i], i
}

// stepUp writes a sudo session, its step-up authentication and the
// assurance challenge the app was sent for it.
func (g *generator) stepUp(user, session uuid.UUID, purpose string, approval uuid.UUID, sudoStatus, challengeStatus string, t time.Time) error {
	b := g.b
	sudo, stepUp, challenge := idAt(t), idAt(t), idAt(t)
	var approvalID any
	kind, binding, level, summary := "step_up", "none", "l2", any(nil)
	if approval != uuid.Nil {
		approvalID = approval.String()
		kind, binding, level, summary = "payment_approval", "tx_signed", "l3", "Payment to Müller Maschinenbau GmbH"
	}
	var window any
	if sudoStatus == "expired" {
		window = t.Add(10 * time.Minute)
	}
	if err := b.add("sudo_sessions", "id, session_id, user_id, purpose, approval_id, status, expires_at, inserted_at, updated_at",
		sudo, session, user, purpose, approvalID, sudoStatus, window, t, t.Add(time.Minute)); err != nil {
		return err
	}
	var method, completed any
	if challengeStatus == "consumed" || challengeStatus == "satisfied" {
		method, completed = "app", t.Add(time.Minute)
		if challengeStatus == "satisfied" {
			method = "totp"
		}
	}
	expires := t.Add(5 * time.Minute)
	if challengeStatus == "pending" {
		expires = g.cfg.Now.Add(5 * time.Minute)
	}
	if err := b.add("step_up_authentications", "id, sudo_session_id, user_id, methods, expires_at, failed_attempts, completed_method, completed_at, inserted_at",
		stepUp, sudo, user, "app,totp", expires, 0, method, completed, t); err != nil {
		return err
	}
	var decided, reason any
	switch challengeStatus {
	case "pending":
	case "declined":
		decided, reason = t.Add(time.Minute), "not_me"
	default:
		decided = t.Add(time.Minute)
	}
	payload := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"challenge_id":%q,"user_id":%q}`, challenge, user)))
	return b.add("assurance_challenges", "id, user_id, step_up_authentication_id, approval_id, kind, binding, action_summary, origin_rail, required_level, status, match_code_hash, match_failures, signing_payload, expires_at, decided_at, inserted_at, decline_reason",
		challenge, user, stepUp, approvalID, kind, binding, summary, "web", level, challengeStatus, randomHex(32), 0, payload, expires, decided, t, reason)
}

// cards issues two cards per organization and spreads n authorizations
// over them: most approved (money out of the USD balance, a feed row, the
// month's spending), some declined.
func (g *generator) cards(begin time.Time, n int) error {
	b := g.b
	for _, o := range g.orgs {
		for c := range 2 {
			id := idAt(begin)
			o.cards = append(o.cards, id)
			if err := b.add("cards", "id, organization_id, user_id, card_holder_name, card_provider, status, frozen, allow_physical, physical_state, physical_replacement, last_four, pan_sealed, expiry_month, expiry_year, monthly_limit, created_at, updated_at",
				id, o.id, o.users[c%len(o.users)], "Seeded Holder", "visa_issuer", "active", false, false, "none", false,
				fmt.Sprintf("%04d", rnd(10000)), randomHex(24), 12, g.cfg.Now.Year()+3, 1_000_000, begin, begin); err != nil {
				return err
			}
		}
	}
	for i := range n {
		o := g.orgs[i%len(g.orgs)]
		if i%10 == 0 { // the heavy organization spends more
			o = g.orgs[0]
		}
		card := o.cards[i%2]
		t := g.spread(begin, i, n)
		amount := int64(100 + rnd(10_000-100))
		approved := i%20 != 3
		var decline, feed any
		if approved {
			_, f, err := g.moveIDs(o, "card_transaction", "out", amount, "USD", "Card payment to Seeded Shop", uuid.Nil, t)
			if err != nil {
				return err
			}
			feed = f
			g.spend[spendKey{card, t.UTC().Format("2006-01")}] += amount
		} else {
			decline = "insufficient_funds"
		}
		if err := b.add("card_authorizations", "id, card_id, organization_id, kind, channel, merchant, amount, currency, usd_amount, approved, decline_reason, transaction_id, inserted_at",
			idAt(t), card, o.id, "purchase", "online", "Seeded Shop", amount, "USD", amount, approved, decline, feed, t); err != nil {
			return err
		}
	}
	g.logf("%d card authorizations", n)
	return nil
}

// paperwork writes bills and expenses: one per fifty and one per twenty payments.
func (g *generator) paperwork(begin time.Time) error {
	b := g.b
	bills, expenses := g.cfg.Rows/50, g.cfg.Rows/20
	statuses := []string{"draft", "submitted", "approved", "rejected", "paid"}
	categories := []string{"meals", "travel", "office", "technology", "transport"}
	for i := range bills {
		o := g.orgs[i%len(g.orgs)]
		t := g.spread(begin, i, bills)
		if err := b.add("bills", "id, organization_id, created_by_id, status, amount_minor, currency, bill_number, issue_date, due_date, supplier_name, iban, inserted_at, updated_at",
			idAt(t), o.id, o.users[i%len(o.users)], "extracted", int64(1000+rnd(100_000)), "EUR", fmt.Sprintf("INV-%d", i),
			t.Format("2006-01-02"), t.AddDate(0, 1, 0).Format("2006-01-02"), "Seeded Supplier GmbH", "DE89370400440532013000", t, t); err != nil {
			return err
		}
	}
	for i := range expenses {
		o := g.orgs[i%len(g.orgs)]
		t := g.spread(begin, i, expenses)
		category := categories[i%len(categories)]
		if category == "travel" {
			category = "accommodation"
		}
		status := statuses[i%len(statuses)]
		var reason any
		if status == "rejected" {
			reason = "No receipt"
		}
		business, description, receipt := fmt.Sprintf("Seeded Café %d", i%97), "Team lunch", fmt.Sprintf("R-%d", i)
		if err := b.add("expenses", "id, organization_id, created_by_id, status, category, description, bill_amount, bill_currency, local_amount, local_currency, business_name, receipt_number, transaction_date, search_text, rejection_reason, inserted_at, updated_at",
			idAt(t), o.id, o.users[i%len(o.users)], status, category, description, int64(500+rnd(20_000)), "EUR", nil, nil, business, receipt,
			t.Format("2006-01-02"), strings.ToLower(business+"\x1f"+description+"\x1f"+receipt), reason, t, t); err != nil {
			return err
		}
	}
	g.logf("%d bills, %d expenses", bills, expenses)
	return nil
}
