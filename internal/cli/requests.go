package cli

import (
	"fmt"
	"strings"

	"github.com/strongroom/strongroom/client/api"
)

func requestsList(e *env, args []string) error {
	fs := e.flags("requests list", "requests list [--status pending|accepted|declined|cancelled|expired|all] [--external-id X] [--org ORG] [-o json]")
	status := fs.String("status", "pending", "only requests of this `status`, or all")
	external := fs.String("external-id", "", "only requests with this `external id` (the requester's reference)")
	e.common(fs, true)
	org, err := e.parseForOrg(fs, args)
	if err != nil {
		return err
	}
	var params api.ListPaymentRequestsParams
	if *status != "all" {
		s := api.PaymentRequestStatus(*status)
		params.Status = &s
	}
	if *external != "" {
		params.ExternalId = external
	}
	all := []api.PaymentRequest{}
	for r, err := range e.c.PaymentRequests(e.ctx, org, &params) {
		if err != nil {
			return err
		}
		all = append(all, r)
	}
	if e.jsonOut() {
		return e.printJSON(all)
	}
	var rows [][]string
	for _, r := range all {
		state := string(r.Status)
		if r.PaymentStatus != nil {
			state += " (" + strings.ReplaceAll(string(*r.PaymentStatus), "_", " ") + ")"
		}
		rows = append(rows, []string{r.Id.String(), state, money(r.Amount, r.Currency), r.PaymentContact.Name, textOf(r.Reference),
			r.RequestedBy.Name, when(r.CreatedAt), when(r.ExpiresAt)})
	}
	return e.table([]string{"ID", "STATUS", "AMOUNT", "TO", "REFERENCE", "REQUESTED BY", "REQUESTED", "EXPIRES"}, rows)
}

// textOf is an optional text as a table shows it.
func textOf(s *string) string {
	if s == nil {
		return "-"
	}
	return orDash(*s)
}

// requestsAccept accepts a request (its payment is made in your name),
// then approves that payment as `approvals approve` does: the phone is
// asked and waited for.
func requestsAccept(e *env, args []string) error {
	fs := e.flags("requests accept", "requests accept ID [--yes] [--org ORG] [-o json]")
	yes := fs.Bool("yes", false, "accept without asking")
	e.common(fs, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageHelpf("requests accept takes one payment request id")
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	r, err := e.c.PaymentRequest(e.ctx, org, pos[0])
	if err != nil {
		return err
	}
	if !e.jsonOut() {
		if err := e.fields([][2]string{
			{"To", r.PaymentContact.Name},
			{"Amount", money(r.Amount, r.Currency)},
			{"Reference", textOf(r.Reference)},
			{"Requested by", r.RequestedBy.Name},
		}); err != nil {
			return err
		}
	}
	if err := e.confirmUnless(*yes, "Pay?"); err != nil {
		return err
	}
	accepted, err := e.c.AcceptPaymentRequest(e.ctx, org, pos[0])
	if err != nil {
		return err
	}
	p, err := e.c.Payment(e.ctx, accepted.PaymentId.String())
	if err != nil {
		return err
	}
	if !e.jsonOut() {
		fmt.Fprintf(e.out, "Payment request %s: accepted; payment %s awaits your approval.\n", accepted.Id, p.Id)
	}
	e.approvalID = p.ApprovalRequestId.String()
	approval, err := e.c.ApprovePayment(e.ctx, e.approvalID)
	if err != nil {
		return err
	}
	if e.jsonOut() {
		return e.printJSON(struct {
			PaymentRequest *api.PaymentRequest `json:"payment_request"`
			Approval       *api.Approval       `json:"approval"`
		}{accepted, approval})
	}
	_, err = fmt.Fprintf(e.out, "Approval %s: %s.\n", approval.Id, approval.Status)
	return err
}

func requestsDecline(e *env, args []string) error {
	fs := e.flags("requests decline", "requests decline ID --reason TEXT [--org ORG] [-o json]")
	reason := fs.String("reason", "", "why, for the requester (1 to 500 characters)")
	e.common(fs, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || strings.TrimSpace(*reason) == "" {
		return usageHelpf("requests decline takes one payment request id and --reason")
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	r, err := e.c.DeclinePaymentRequest(e.ctx, org, pos[0], *reason)
	if err != nil {
		return err
	}
	if e.jsonOut() {
		return e.printJSON(r)
	}
	_, err = fmt.Fprintf(e.out, "Payment request %s: %s.\n", r.Id, r.Status)
	return err
}
