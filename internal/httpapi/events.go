package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// An organization's events, read (the events API), followed (the realtime
// channel, realtime.go) or delivered (webhooks): every path renders an event
// for its viewer with renderEvent, from the one list of carried types,
// realtimeRenderers.

// eventsWindow is how far back the events API reads.
const eventsWindow = 30 * 24 * time.Hour

// Scopes of the events operations.
const (
	scopeEventsRead      = "events:read"
	scopeEventsSubscribe = "events:subscribe"
)

// eventID is an event of the organization in the path.
var eventID = param{"event_id", "Event"}

// eventMessage is one event as its viewer sees it: a realtime message, an
// Event of the events API, a webhook's body.
type eventMessage struct {
	ID             uuid.UUID `json:"id"`
	Type           string    `json:"type"`
	OrganizationID uuid.UUID `json:"organization_id"`
	OccurredAt     time.Time `json:"occurred_at"`
	Data           any       `json:"data"`
}

// carries reports whether events of typ are shown to anyone.
func (s *server) carries(typ string) bool {
	_, ok := s.renderers()[typ]
	return ok
}

// renderers is realtimeRenderers, made once.
func (s *server) renderers() map[string]realtimeRenderer {
	s.renderersOnce.Do(func() { s.renderersMap = s.realtimeRenderers() })
	return s.renderersMap
}

// renderEvent renders e for a: its data is the record the event names, as
// a's own GET of it would render it now. ok is false when e is not for a:
// its type is not carried, it names no organization, or a may not read the
// record (a member's view of another member's card) or it is gone. A key
// reads as a person of its role would (actor.Key.ReadsAsRole).
func (s *server) renderEvent(ctx context.Context, a actor.Actor, e event.Event) (msg eventMessage, ok bool, err error) {
	render := s.renderers()[e.Type]
	if render == nil || e.OrganizationID == uuid.Nil {
		return eventMessage{}, false, nil
	}
	data, err := render(ctx, a.AsViewer(), e.Data)
	if apierr.Is(err, apierr.NotFound) || apierr.Is(err, apierr.Forbidden) || apierr.Is(err, apierr.APIKeyNotPermitted) {
		return eventMessage{}, false, nil
	}
	if err != nil {
		return eventMessage{}, false, fmt.Errorf("event %s (%s): %w", e.ID, e.Type, err)
	}
	return eventMessage{ID: e.ID, Type: e.Type, OrganizationID: e.OrganizationID, OccurredAt: e.OccurredAt, Data: data}, true, nil
}

// EventRenderer returns the renderer of webhook bodies: event e of
// organization orgID as the JSON Event the events API would answer to the
// organization's owners (every record of the organization, as an owner's
// GET renders it). ok is false when the event is not carried, is of
// another organization or its record is gone; the organization not being
// readable (banned, deleted) is organization_unavailable.
func EventRenderer(d Deps) func(ctx context.Context, orgID uuid.UUID, e event.Event) ([]byte, bool, error) {
	s := &server{Deps: d, logger: d.Logger}
	return func(ctx context.Context, orgID uuid.UUID, e event.Event) ([]byte, bool, error) {
		if e.OrganizationID != orgID {
			return nil, false, nil
		}
		msg, ok, err := s.renderEvent(ctx, actor.OrganizationViewer(orgID), e)
		if err != nil || !ok {
			return nil, false, err
		}
		body, err := json.Marshal(msg)
		return body, err == nil, err
	}
}

// byIDIn renders an event whose data names a record of an organization by
// id in field (and the organization in organization_id), with the record's
// GET.
func byIDIn[T, R any](field string, get func(context.Context, actor.Actor, uuid.UUID, uuid.UUID) (T, error), record func(T) R) realtimeRenderer {
	return func(ctx context.Context, a actor.Actor, data json.RawMessage) (any, error) {
		var ids map[string]string
		if err := json.Unmarshal(data, &ids); err != nil {
			return nil, fmt.Errorf("event data: %w", err)
		}
		org, err1 := uuid.Parse(ids["organization_id"])
		id, err2 := uuid.Parse(ids[field])
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("event data: %w", err)
		}
		v, err := get(ctx, a, org, id)
		if err != nil {
			return nil, err
		}
		return record(v), nil
	}
}

// eventsAccess admits a to org's events API: any member's session, or a
// key of the organization holding events:read.
func (s *server) eventsAccess(ctx context.Context, a actor.Actor, org uuid.UUID) error {
	_, err := organization.Check(ctx, s.DB.Reader(), a, org, organization.Need{Scope: scopeEventsRead})
	return err
}

// eventsScan bounds how many events one page of the list reads: events the
// viewer may not see are read and left out, and a page stops there even
// when it holds fewer than its limit (has_more tells the client to go on).
const eventsScan = 500

// eventFilterParams are the list's filters, which its cursors are bound to.
var eventFilterParams = []string{"type", "occurred_from", "occurred_to"}

// eventTypePattern is an event type, or a prefix of types ending ".*".
var eventTypePattern = regexp.MustCompile(`^[a-z][a-z_]*(\.[a-z][a-z_]*)*(\.\*)?$`)

// maxEventTypes bounds the type filter's values.
const maxEventTypes = 20

// readEventFilter reads the list's filters: types and prefixes among the
// carried types, and an occurred_at range of RFC 3339 times.
func (s *server) readEventFilter(r *http.Request, now time.Time) (event.Filter, error) {
	q := r.URL.Query()
	f := event.Filter{Since: now.Add(-eventsWindow)}
	var errs apierr.Fields
	if len(q["type"]) > maxEventTypes {
		errs.Add("type", fmt.Sprintf("may be given at most %d times.", maxEventTypes))
	}
	for _, t := range q["type"] {
		if len(q["type"]) > maxEventTypes {
			break
		}
		if len(t) > 100 || !eventTypePattern.MatchString(t) {
			errs.Add("type", "must be an event type (payment.updated) or a prefix of types (payment.*).")
			break
		}
		if prefix, ok := strings.CutSuffix(t, "*"); ok {
			if !s.carriesPrefix(prefix) {
				errs.Add("type", fmt.Sprintf("%s matches no event type.", t))
				break
			}
			f.Prefixes = append(f.Prefixes, prefix)
			continue
		}
		if !s.carries(t) {
			errs.Add("type", fmt.Sprintf("%s is not an event type.", t))
			break
		}
		f.Types = append(f.Types, t)
	}
	for name, target := range map[string]**time.Time{"occurred_from": &f.From, "occurred_to": &f.To} {
		vs := q[name]
		if len(vs) == 0 {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, vs[0])
		if len(vs) > 1 || err != nil {
			errs.Add(name, "must be one RFC 3339 date and time, such as 2026-11-25T09:30:00Z.")
			continue
		}
		*target = &t
	}
	if f.From != nil && f.To != nil && !f.From.Before(*f.To) {
		errs.Add("occurred_to", "must be after occurred_from.")
	}
	return f, errs.Err()
}

// carriesPrefix reports whether some carried type starts with prefix.
func (s *server) carriesPrefix(prefix string) bool {
	for t := range s.renderers() {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	return false
}

func eventPageKey(k event.ListKey) page.Key {
	return page.Key{Sort: k.OccurredAt.UTC().Format(time.RFC3339Nano), ID: k.ID.String()}
}

// listEvents answers a page of the organization's events of the last 30
// days, newest first, that the viewer may see.
func (s *server) listEvents(w http.ResponseWriter, r *http.Request) error {
	org, err := organizationID.id(r)
	if err != nil {
		return err
	}
	ctx, a := r.Context(), actorOf(r)
	if err := s.eventsAccess(ctx, a, org); err != nil {
		return err
	}
	reader := s.DB.Reader()
	f, err := s.readEventFilter(r, reader.Now())
	if err != nil {
		return err
	}
	pages := s.pages("events")
	req, err := pages.Parse(r.URL.Query(), eventFilterParams...)
	if err != nil {
		return err
	}
	var after *event.ListKey
	if req.After != nil {
		t, err1 := time.Parse(time.RFC3339Nano, req.After.Sort)
		id, err2 := uuid.Parse(req.After.ID)
		if err1 != nil || err2 != nil {
			return apierr.New(apierr.InvalidCursor, "The cursor is not valid for this list; start again from the first page.")
		}
		after = &event.ListKey{OccurredAt: t, ID: id}
	}
	var (
		data    []eventMessage
		more    bool
		next    event.ListKey
		scanned int
	)
	batch := req.Limit + 1
read:
	for {
		events, err := event.List(ctx, reader, org, f, after, batch)
		if err != nil {
			return err
		}
		for _, e := range events {
			msg, ok, err := s.renderEvent(ctx, a, e)
			if err != nil {
				return err
			}
			if ok {
				if len(data) == req.Limit {
					more = true // the page is full and one more follows
					break read
				}
				data = append(data, msg)
			}
			next = event.KeyOf(e)
			scanned++
			if scanned >= eventsScan {
				more = true
				break read
			}
		}
		if len(events) < batch {
			break
		}
		after = &next
	}
	// next is the last event read and handled: the next page resumes after
	// it, without reading again what this one left out.
	return writeJSON(w, http.StatusOK, page.Cut(pages, req, data, more, eventPageKey(next)))
}

// getEvent answers one event of the organization's last 30 days that the
// viewer may see; any other is not found.
func (s *server) getEvent(w http.ResponseWriter, r *http.Request) error {
	org, err := organizationID.id(r)
	if err != nil {
		return err
	}
	id, err := eventID.id(r)
	if err != nil {
		return err
	}
	ctx, a := r.Context(), actorOf(r)
	if err := s.eventsAccess(ctx, a, org); err != nil {
		return err
	}
	reader := s.DB.Reader()
	e, err := event.Get(ctx, reader, org, id, reader.Now().Add(-eventsWindow))
	if errors.Is(err, event.ErrNotFound) {
		return apierr.NotFoundf("Event")
	}
	if err != nil {
		return err
	}
	msg, ok, err := s.renderEvent(ctx, a, e)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.NotFoundf("Event")
	}
	return writeJSON(w, http.StatusOK, msg)
}
