package httpapi

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// The audit log (docs/api.md, Audit log): the list, and the origin every
// change's entry is recorded with.

// withAuditOrigin returns r carrying who acts (the authenticated person or
// key, or the sandbox), the request id and the client's address, for the
// entries the services record in their transactions.
func withAuditOrigin(r *http.Request, kind authKind) *http.Request {
	o := audit.Origin{Actor: audit.System, RequestID: infoOf(r).id, ClientAddress: clientAddress(r)}
	switch kind {
	case authSandbox, authSandboxPage:
		o.Actor = audit.Sandbox
	case authSession, authSessionOrKey:
		o.Actor = audit.ActorOf(actorOf(r))
	}
	return r.WithContext(audit.WithOrigin(r.Context(), o))
}

var auditEntries = resource[audit.Entry, auditEntryRecord]{at: organizationID, record: newAuditEntryRecord,
	pages: "audit-log", key: audit.PageKey}

type auditActorRecord struct {
	Kind string     `json:"kind"`
	ID   *uuid.UUID `json:"id"`
	Name string     `json:"name"`
}

type auditTargetRecord struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type auditEntryRecord struct {
	ID            uuid.UUID         `json:"id"`
	OccurredAt    time.Time         `json:"occurred_at"`
	Actor         auditActorRecord  `json:"actor"`
	Action        string            `json:"action"`
	Target        auditTargetRecord `json:"target"`
	RequestID     *string           `json:"request_id"`
	ClientAddress *string           `json:"client_address"`
	Hash          string            `json:"hash"`
}

func newAuditEntryRecord(e audit.Entry) auditEntryRecord {
	return auditEntryRecord{ID: e.ID, OccurredAt: e.OccurredAt,
		Actor:  auditActorRecord{Kind: e.Actor.Kind, ID: e.Actor.ID, Name: e.Actor.Name},
		Action: e.Action, Target: auditTargetRecord{Type: e.Target.Type, ID: e.Target.ID},
		RequestID: e.RequestID, ClientAddress: e.ClientAddress, Hash: e.Hash}
}

// auditFilter reads the list's filters: one actor, one action, inclusive
// calendar dates (UTC); any other parameter is refused.
var auditFilter = &filter[audit.Filter]{read: readAuditFilter, params: []string{"actor_id", "action", "from", "to"}}

func readAuditFilter(r *http.Request) (audit.Filter, error) {
	q := r.URL.Query()
	var f audit.Filter
	var errs apierr.Fields
	errs.CheckQuery(q, []string{"actor_id", "action", "from", "to", "limit", "cursor"},
		"use actor_id, action, from, to, limit and cursor.")
	if _, ok := q["actor_id"]; ok {
		id, err := uuid.Parse(q.Get("actor_id"))
		if err != nil {
			errs.Add("actor_id", "must be the id of a user or an API key.")
		} else {
			f.ActorID = &id
		}
	}
	if _, ok := q["action"]; ok {
		f.Action = q.Get("action")
		errs.Check(slices.Contains(audit.Actions, f.Action), "action", "must be one of the actions docs/api.md lists under Audit log.")
	}
	var from, to *time.Time
	for name, target := range map[string]**time.Time{"from": &from, "to": &to} {
		if _, ok := q[name]; !ok {
			continue
		}
		d, err := time.Parse(time.DateOnly, q.Get(name))
		if err != nil {
			errs.Add(name, "must be a calendar date YYYY-MM-DD.")
			continue
		}
		*target = &d
	}
	if from != nil && to != nil && to.Before(*from) {
		errs.Add("to", "must not be before from.")
	}
	f.From = from
	if to != nil {
		end := to.AddDate(0, 0, 1) // the whole day is in
		f.To = &end
	}
	slices.SortFunc(errs, func(a, b apierr.FieldError) int {
		switch {
		case a.Field < b.Field:
			return -1
		case a.Field > b.Field:
			return 1
		}
		return 0
	})
	return f, errs.Err()
}

// listAuditLog is the organization's audit log, newest first.
func (s *server) listAuditLog(ctx context.Context, a actor.Actor, orgID uuid.UUID, f audit.Filter, req page.Request) ([]audit.Entry, error) {
	return (&audit.Service{DB: s.DB}).List(ctx, a, orgID, f, req)
}
