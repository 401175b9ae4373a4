package cli

import (
	"fmt"

	"github.com/strongroom/strongroom/client/api"
)

func approvalsList(e *env, args []string) error {
	fs := e.flags("approvals list", "approvals list [--status pending|approved|rejected|cancelled|all] [--org ORG] [-o json]")
	status := fs.String("status", "pending", "only approvals of this `status`, or all")
	e.common(fs, true)
	if _, err := e.parse(fs, args); err != nil {
		return err
	}
	var params api.ListApprovalsParams
	if *status != "all" {
		s := api.ApprovalStatus(*status)
		params.Status = &s
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	all := []api.Approval{}
	for a, err := range e.c.Approvals(e.ctx, org, &params) {
		if err != nil {
			return err
		}
		all = append(all, a)
	}
	if e.jsonOut() {
		return e.printJSON(all)
	}
	// What each payment pays, and to whom.
	names := map[string]string{}
	var rows [][]string
	for _, a := range all {
		amount, debited, to := "-", "-", "-"
		if a.Kind == api.ApprovalKindPayment {
			p, err := e.c.Payment(e.ctx, a.TargetId.String())
			if err != nil {
				return err
			}
			amount, debited = money(p.Delivered.Amount, p.Delivered.Currency), money(p.Debited.Amount, p.Debited.Currency)
			id := p.PaymentContactId.String()
			if _, ok := names[id]; !ok {
				pc, err := e.c.PaymentContact(e.ctx, id)
				if err != nil {
					return err
				}
				names[id] = pc.Name
			}
			to = names[id]
		}
		rows = append(rows, []string{a.Id.String(), string(a.Kind), string(a.Status), amount, to, debited, when(a.InsertedAt)})
	}
	return e.table([]string{"ID", "KIND", "STATUS", "AMOUNT", "TO", "DEBITED WITH FEE", "REQUESTED"}, rows)
}

func approvalsApprove(e *env, args []string) error {
	fs := e.flags("approvals approve", "approvals approve ID [-o json]")
	e.common(fs, false)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageHelpf("approvals approve takes one approval id")
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	e.approvalID = pos[0] // to find and name its challenge while the phone is waited for
	a, err := c.ApprovePayment(e.ctx, pos[0])
	if err != nil {
		return err
	}
	return e.printApproval(a)
}

func approvalsReject(e *env, args []string) error {
	fs := e.flags("approvals reject", "approvals reject ID [--reason TEXT] [-o json]")
	reason := fs.String("reason", "", "why (at most 500 bytes)")
	e.common(fs, false)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageHelpf("approvals reject takes one approval id")
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	a, err := c.RejectPayment(e.ctx, pos[0], *reason)
	if err != nil {
		return err
	}
	return e.printApproval(a)
}

// printApproval prints an approval as it now stands: its record with -o
// json, else one line.
func (e *env) printApproval(a *api.Approval) error {
	if e.jsonOut() {
		return e.printJSON(a)
	}
	_, err := fmt.Fprintf(e.out, "Approval %s: %s.\n", a.Id, a.Status)
	return err
}
