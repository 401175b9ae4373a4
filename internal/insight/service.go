package insight

import (
	"context"
	"sort"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// Sums are the money of a period (or of the whole range), each list sorted
// by currency code, without the currencies that sum to zero.
type Sums struct {
	Incoming, Outgoing, Payments, Net []money.Amount
}

// PeriodSums is one period's label and sums.
type PeriodSums struct {
	Label string
	Sums
}

// Result is what the insights operation answers.
type Result struct {
	Range            Range
	Periods          []PeriodSums
	Summary          Sums
	TransactionCount int64
}

// Service answers insights to the members of an organization.
type Service struct {
	DB *db.DB
}

// ErrSumLimit is returned when a sum would leave what int64 minor units
// hold; nothing is rounded or shown as a float.
var ErrSumLimit = apierr.New(apierr.UnprocessableEntity, "These sums are beyond the largest amount that can be shown; choose a shorter range.")

// Get returns the insights of orgID for q. The range's presets are taken on
// the UTC date of the service clock. Errors: invalid_request (Resolve), and
// not_found for an organization the actor is not a member of; API keys are
// refused (no scope grants insights).
func (s *Service) Get(ctx context.Context, a actor.Actor, orgID uuid.UUID, q Query) (Result, error) {
	if _, err := organization.Check(ctx, s.DB.Reader(), a, orgID, organization.Need{}); err != nil {
		return Result{}, err
	}
	r, err := Resolve(q, s.DB.Now())
	if err != nil {
		return Result{}, err
	}
	days, err := ledger.DailySums(ctx, s.DB.Reader(), orgID, r.Start, r.End.AddDate(0, 0, 1))
	if err != nil {
		return Result{}, err
	}
	return Fold(r, days)
}

// Fold puts the day sums (ascending by day, as ledger.DailySums returns
// them) into the periods of r and the summary. Every period of r is in the
// result, in order; a day outside r is ignored. Sums are checked: beyond
// int64 is ErrSumLimit.
func Fold(r Range, days []ledger.DaySums) (Result, error) {
	res := Result{Range: r}
	total := newTally()
	i := 0
	for _, p := range Periods(r) {
		for i < len(days) && days[i].Day.Before(p.Start) {
			i++
		}
		t := newTally()
		for ; i < len(days) && days[i].Day.Before(p.End); i++ {
			d := days[i]
			if err := t.add(d); err != nil {
				return Result{}, err
			}
			if err := total.add(d); err != nil {
				return Result{}, err
			}
			res.TransactionCount += d.Count
		}
		sums, err := t.sums()
		if err != nil {
			return Result{}, err
		}
		res.Periods = append(res.Periods, PeriodSums{Label: p.Label, Sums: sums})
	}
	summary, err := total.sums()
	if err != nil {
		return Result{}, err
	}
	res.Summary = summary
	return res, nil
}

// tally adds up the three categories per currency.
type tally map[string]*[3]money.Amount

func newTally() tally { return tally{} }

func (t tally) add(d ledger.DaySums) error {
	c := t[d.Currency]
	if c == nil {
		c = &[3]money.Amount{{Currency: d.Currency}, {Currency: d.Currency}, {Currency: d.Currency}}
		t[d.Currency] = c
	}
	for k, v := range [3]int64{d.Incoming, d.Outgoing, d.Payments} {
		sum, err := c[k].Add(money.Amount{Minor: v, Currency: d.Currency})
		if err != nil {
			return ErrSumLimit
		}
		c[k] = sum
	}
	return nil
}

// sums lists each category and the net (incoming − outgoing − payments) by
// currency code, leaving zero amounts out; the lists are empty, never nil.
func (t tally) sums() (Sums, error) {
	codes := make([]string, 0, len(t))
	for c := range t {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	s := Sums{Incoming: []money.Amount{}, Outgoing: []money.Amount{}, Payments: []money.Amount{}, Net: []money.Amount{}}
	keep := func(list *[]money.Amount, a money.Amount) {
		if !a.IsZero() {
			*list = append(*list, a)
		}
	}
	for _, code := range codes {
		c := t[code]
		net, err := c[0].Sub(c[1])
		if err == nil {
			net, err = net.Sub(c[2])
		}
		if err != nil {
			return Sums{}, ErrSumLimit
		}
		keep(&s.Incoming, c[0])
		keep(&s.Outgoing, c[1])
		keep(&s.Payments, c[2])
		keep(&s.Net, net)
	}
	return s, nil
}
