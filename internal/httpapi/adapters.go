package httpapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// The handler vocabulary. A JSON operation reads its inputs in one order:
// the ids in the path (a malformed id is not_found), then the query, then
// the body; it makes one call to a feature's service as the request's
// actor and answers the result as its record. An operation is one route
// line: a resource (what the path names first, and the record of the
// answer), one of the adapters below, and the service's method. The
// adapters differ only in what they read:
//
//	ids in the path   body not read    body refused    JSON body
//	none              x.read(op)       x.run(op)       send(x, status, op)
//	one               x.get(op)        x.act(op)       change(x, status, op)
//	two               x.getIn(p, op)   x.actIn(p, op)  changeIn(x, p, status, op)
//
// plus x.list, x.listOwn and listBy for pages, and x.serve, the core of
// them all, for an operation that reads its query itself. "Body refused"
// admits an empty body, {} or null; a resource's optionalBody lets a JSON
// body be left out. Where a service's method takes no actor (the sandbox,
// the sign-in family), noActor, noActorBody or noActorSend fits it in. A
// call that fits no service method as it is gets a small method of the
// adapter's shape (one call, maybe a conversion) in the feature's file.
//
// Written out by hand are only the handlers that are not one JSON call:
// streams and bytes (realtime, file content, the bill upload), signed
// bodies (partner webhooks), headers in or out (payment execute, sign-in's
// client address, sign-out's bearer), answers without a body (a card's
// PIN), pages carrying more than rows (approvals, devices), the sandbox's
// HTML page, and the operational endpoints.

// param is an id in the path: the path value's name and the kind a
// not_found names.
type param struct{ name, kind string }

// organizationID is the organization in the path; reading it notes it for
// the access log.
var organizationID = param{"organization_id", "Organization"}

// id parses p from r's path; the zero param (no id in the path) reads nothing.
func (p param) id(r *http.Request) (uuid.UUID, error) {
	if p.name == "" {
		return uuid.Nil, nil
	}
	id, err := pathID(r, p.name, p.kind)
	if err == nil && p == organizationID {
		setOrganization(r, id.String())
	}
	return id, err
}

// resource is what an operation's path names first (at; the zero param when
// the path names nothing) and how its answer, a T, is written (record).
type resource[T, R any] struct {
	at     param
	record func(T) R
	// optional: the body may be left out (every field is optional); an
	// empty body then decodes as the zero request.
	optional bool
	// pages names x's list, whose cursors are signed for it alone, and key
	// gives a row's position in it.
	pages string
	key   func(T) page.Key
}

// under is x named under p in the path (its list in the organization, its
// creation there).
func (x resource[T, R]) under(p param) resource[T, R] {
	x.at = p
	return x
}

// optionalBody is x for operations whose JSON body may be left out.
func (x resource[T, R]) optionalBody() resource[T, R] {
	x.optional = true
	return x
}

// owned is a record that names its organization, noted for the access log
// when the path does not name it.
type owned interface{ organization() uuid.UUID }

// answer writes v as its record with status, unless the operation that
// produced v failed (err), which the error mapping answers.
func (x resource[T, R]) answer(w http.ResponseWriter, r *http.Request, status int, v T, err error) error {
	if err != nil {
		return err
	}
	rec := x.record(v)
	if o, ok := any(rec).(owned); ok {
		setOrganization(r, o.organization().String())
	}
	return writeJSON(w, status, rec)
}

// serve is the core of every adapter: it reads the id in the path, runs op
// with it and answers with status. Used alone, it serves an operation that
// reads its query itself.
func (x resource[T, R]) serve(status int, op func(r *http.Request, id uuid.UUID) (T, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := x.at.id(r)
		if err != nil {
			return err
		}
		v, err := op(r, id)
		return x.answer(w, r, status, v, err)
	}
}

// body decodes r's JSON body into a Req; for an optional body, an empty
// one is the zero Req.
func body[Req, T, R any](x resource[T, R], r *http.Request) (Req, error) {
	var req Req
	if x.optional {
		return req, decodeOptional(r, &req)
	}
	return req, decode(r, &req)
}

// read answers op, for an operation whose path names nothing, without
// reading the body.
func (x resource[T, R]) read(op func(context.Context, actor.Actor) (T, error)) handlerFunc {
	return x.under(param{}).serve(http.StatusOK, func(r *http.Request, _ uuid.UUID) (T, error) { return op(r.Context(), actorOf(r)) })
}

// run is read for an operation that takes no body (an empty body, {} or null).
func (x resource[T, R]) run(op func(context.Context, actor.Actor) (T, error)) handlerFunc {
	return x.under(param{}).serve(http.StatusOK, func(r *http.Request, _ uuid.UUID) (T, error) {
		if err := noBody(r); err != nil {
			var zero T
			return zero, err
		}
		return op(r.Context(), actorOf(r))
	})
}

// send answers op with status, for an operation whose path names nothing,
// with its JSON body.
func send[Req, T, R any](x resource[T, R], status int, op func(context.Context, actor.Actor, Req) (T, error)) handlerFunc {
	return x.under(param{}).serve(status, func(r *http.Request, _ uuid.UUID) (T, error) {
		req, err := body[Req](x, r)
		if err != nil {
			var zero T
			return zero, err
		}
		return op(r.Context(), actorOf(r), req)
	})
}

// get answers op on the id in the path, without reading the body.
func (x resource[T, R]) get(op func(context.Context, actor.Actor, uuid.UUID) (T, error)) handlerFunc {
	return x.serve(http.StatusOK, func(r *http.Request, id uuid.UUID) (T, error) { return op(r.Context(), actorOf(r), id) })
}

// act is get for an operation that takes no body (an empty body, {} or null).
func (x resource[T, R]) act(op func(context.Context, actor.Actor, uuid.UUID) (T, error)) handlerFunc {
	return x.serve(http.StatusOK, func(r *http.Request, id uuid.UUID) (T, error) {
		if err := noBody(r); err != nil {
			var zero T
			return zero, err
		}
		return op(r.Context(), actorOf(r), id)
	})
}

// change answers op with status on the id in the path, with its JSON body.
func change[Req, T, R any](x resource[T, R], status int, op func(context.Context, actor.Actor, uuid.UUID, Req) (T, error)) handlerFunc {
	return x.serve(status, func(r *http.Request, id uuid.UUID) (T, error) {
		req, err := body[Req](x, r)
		if err != nil {
			var zero T
			return zero, err
		}
		return op(r.Context(), actorOf(r), id, req)
	})
}

// getIn answers op on the second id in the path, p (an object of the
// organization, a part of the object), without reading the body.
func (x resource[T, R]) getIn(p param, op func(context.Context, actor.Actor, uuid.UUID, uuid.UUID) (T, error)) handlerFunc {
	return x.serve(http.StatusOK, func(r *http.Request, id uuid.UUID) (T, error) {
		second, err := p.id(r)
		if err != nil {
			var zero T
			return zero, err
		}
		return op(r.Context(), actorOf(r), id, second)
	})
}

// actIn is getIn for an operation that takes no body (an empty body, {} or null).
func (x resource[T, R]) actIn(p param, op func(context.Context, actor.Actor, uuid.UUID, uuid.UUID) (T, error)) handlerFunc {
	return x.serve(http.StatusOK, func(r *http.Request, id uuid.UUID) (T, error) {
		second, err := p.id(r)
		if err == nil {
			err = noBody(r)
		}
		if err != nil {
			var zero T
			return zero, err
		}
		return op(r.Context(), actorOf(r), id, second)
	})
}

// changeIn is getIn for an operation with its JSON body, answered with status.
func changeIn[Req, T, R any](x resource[T, R], p param, status int, op func(context.Context, actor.Actor, uuid.UUID, uuid.UUID, Req) (T, error)) handlerFunc {
	return x.serve(status, func(r *http.Request, id uuid.UUID) (T, error) {
		second, err := p.id(r)
		if err != nil {
			var zero T
			return zero, err
		}
		req, err := body[Req](x, r)
		if err != nil {
			var zero T
			return zero, err
		}
		return op(r.Context(), actorOf(r), id, second, req)
	})
}

// list answers a page of x's list (x.pages names it), op, of the id in the
// path. The query holds only the page's own parameters.
func (x resource[T, R]) list(s *server, op func(context.Context, actor.Actor, uuid.UUID, page.Request) ([]T, error)) handlerFunc {
	return listBy(s, x, nil, func(ctx context.Context, a actor.Actor, id uuid.UUID, _ struct{}, req page.Request) ([]T, error) {
		return op(ctx, a, id, req)
	})
}

// listOwn is list for a list of the person's own (the path names nothing).
func (x resource[T, R]) listOwn(s *server, op func(context.Context, actor.Actor, page.Request) ([]T, error)) handlerFunc {
	return x.under(param{}).list(s, func(ctx context.Context, a actor.Actor, _ uuid.UUID, req page.Request) ([]T, error) {
		return op(ctx, a, req)
	})
}

// filter reads a list's filters (from the query, or a second id in the
// path) and names the query parameters it reads.
type filter[F any] struct {
	read   func(r *http.Request) (F, error)
	params []string
}

// listBy is list with filters, read before the page.
func listBy[F, T, R any](s *server, x resource[T, R], f *filter[F], op func(context.Context, actor.Actor, uuid.UUID, F, page.Request) ([]T, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := x.at.id(r)
		if err != nil {
			return err
		}
		var fv F
		var params []string
		if f != nil {
			if fv, err = f.read(r); err != nil {
				return err
			}
			params = f.params
		}
		pages := s.pages(x.pages)
		req, err := pages.Parse(r.URL.Query(), params...)
		if err != nil {
			return err
		}
		rows, err := op(r.Context(), actorOf(r), id, fv, req)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, mapPage(page.Build(pages, req, rows, x.key), x.record))
	}
}

// noActor fits a service method that acts as no person (the sandbox's) to
// get and act.
func noActor[T any](op func(context.Context, uuid.UUID) (T, error)) func(context.Context, actor.Actor, uuid.UUID) (T, error) {
	return func(ctx context.Context, _ actor.Actor, id uuid.UUID) (T, error) { return op(ctx, id) }
}

// noActorBody is noActor for change.
func noActorBody[Req, T any](op func(context.Context, uuid.UUID, Req) (T, error)) func(context.Context, actor.Actor, uuid.UUID, Req) (T, error) {
	return func(ctx context.Context, _ actor.Actor, id uuid.UUID, req Req) (T, error) { return op(ctx, id, req) }
}

// noActorSend is noActor for send.
func noActorSend[Req, T any](op func(context.Context, Req) (T, error)) func(context.Context, actor.Actor, Req) (T, error) {
	return func(ctx context.Context, _ actor.Actor, req Req) (T, error) { return op(ctx, req) }
}

// mapPage converts a page of domain values into a page of records.
func mapPage[T, R any](p page.Page[T], f func(T) R) page.Page[R] {
	out := page.Page[R]{HasMore: p.HasMore, NextCursor: p.NextCursor, Data: make([]R, len(p.Data))}
	for i, v := range p.Data {
		out.Data[i] = f(v)
	}
	return out
}

// mapSlice applies f to every element of xs; nil stays nil (JSON null).
func mapSlice[T, R any](xs []T, f func(T) R) []R {
	if xs == nil {
		return nil
	}
	out := make([]R, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
