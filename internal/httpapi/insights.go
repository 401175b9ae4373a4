package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/insight"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/money"
)

type insightDateRangeRecord struct {
	StartDate string  `json:"start_date"`
	EndDate   string  `json:"end_date"`
	Grouping  string  `json:"grouping"`
	Preset    *string `json:"preset"`
}

type insightSumsRecord struct {
	Incoming []assetAmountRecord `json:"incoming"`
	Outgoing []assetAmountRecord `json:"outgoing"`
	Payments []assetAmountRecord `json:"payments"`
	Net      []assetAmountRecord `json:"net"`
}

// assetAmountRecord is an amount in a currency or in a coin (AssetMoney).
// money.Amount's own encoding takes currencies only, so that an unset
// Amount is never sent as money; the feed sums coins from crypto deposits
// too, so each sum is formatted here at its currency's or coin's precision
// ("100.000000" USDC).
type assetAmountRecord struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

// assetAmounts formats a list of sums; an empty list stays an empty array.
func assetAmounts(as []money.Amount) []assetAmountRecord {
	out := make([]assetAmountRecord, len(as))
	for i, a := range as {
		out[i] = assetAmountRecord{Amount: a.String(), Currency: a.Currency}
	}
	return out
}

type insightPeriodRecord struct {
	Period string `json:"period"`
	insightSumsRecord
}

type insightsRecord struct {
	DateRange        insightDateRangeRecord `json:"date_range"`
	Periods          []insightPeriodRecord  `json:"periods"`
	Summary          insightSumsRecord      `json:"summary"`
	TransactionCount int64                  `json:"transaction_count"`
}

func newInsightSums(s insight.Sums) insightSumsRecord {
	return insightSumsRecord{Incoming: assetAmounts(s.Incoming), Outgoing: assetAmounts(s.Outgoing),
		Payments: assetAmounts(s.Payments), Net: assetAmounts(s.Net)}
}

func newInsightsRecord(res insight.Result) insightsRecord {
	r := res.Range
	out := insightsRecord{
		DateRange: insightDateRangeRecord{StartDate: r.Start.Format(time.DateOnly), EndDate: r.End.Format(time.DateOnly),
			Grouping: r.Grouping, Preset: r.Preset},
		Periods:          make([]insightPeriodRecord, len(res.Periods)),
		Summary:          newInsightSums(res.Summary),
		TransactionCount: res.TransactionCount,
	}
	for i, p := range res.Periods {
		out.Periods[i] = insightPeriodRecord{Period: p.Label, insightSumsRecord: newInsightSums(p.Sums)}
	}
	return out
}

// insightParams are the query parameters insights accept.
var insightParams = []string{"preset", "start_date", "end_date", "group_by"}

// insightQuery reads the query strictly: only its own parameters, each at
// most once, dates as YYYY-MM-DD. The rules between them are insight.Resolve's.
func insightQuery(r *http.Request) (insight.Query, error) {
	params := r.URL.Query()
	var errs apierr.Fields
	errs.CheckQuery(params, insightParams, "use preset, start_date, end_date and group_by.")
	q := insight.Query{Preset: params.Get("preset"), GroupBy: params.Get("group_by")}
	for _, date := range []struct {
		name   string
		target **time.Time
	}{{"start_date", &q.Start}, {"end_date", &q.End}} {
		name, target := date.name, date.target
		if _, ok := params[name]; !ok {
			continue
		}
		d, err := time.Parse(time.DateOnly, params.Get(name))
		if err != nil {
			errs.Add(name, "must be a calendar date YYYY-MM-DD.")
			continue
		}
		*target = &d
	}
	for _, name := range []string{"preset", "group_by"} {
		if vs, ok := params[name]; ok && vs[0] == "" {
			errs.Add(name, "must not be empty.")
		}
	}
	return q, errs.Err()
}

// insights are the sums of the organization in the path.
var insightSums = resource[insight.Result, insightsRecord]{at: organizationID, record: newInsightsRecord}

// insights reads its query (insightQuery) and sums the organization's
// transactions (insightSums.serve).
func (s *server) insights(r *http.Request, org uuid.UUID) (insight.Result, error) {
	q, err := insightQuery(r)
	if err != nil {
		return insight.Result{}, err
	}
	svc := insight.Service{DB: s.DB}
	return svc.Get(r.Context(), actorOf(r), org, q)
}
