package httpapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
)

// object describes a resource whose operations name it in the path and
// answer it: the path value holding its id, the kind not_found names, its
// organization (noted for the access log) and its record.
type object[T, R any] struct {
	name, kind string
	org        func(T) uuid.UUID
	record     func(T) R
}

// handler is the handler of an operation on the object in the path that
// answers with the object.
func (o object[T, R]) handler(op func(r *http.Request, id uuid.UUID) (T, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r, o.name, o.kind)
		if err != nil {
			return err
		}
		v, err := op(r, id)
		if err == nil {
			setOrganization(r, o.org(v).String())
		}
		return render(w, http.StatusOK, o.record, v, err)
	}
}

// action is handler for a person's operation that takes no body (an empty
// body or {}).
func (o object[T, R]) action(act func(context.Context, actor.Actor, uuid.UUID) (T, error)) handlerFunc {
	return o.handler(func(r *http.Request, id uuid.UUID) (T, error) {
		if err := noBody(r); err != nil {
			var zero T
			return zero, err
		}
		return act(r.Context(), actorOf(r), id)
	})
}

// part is handler for a person's operation on a part of the object (a
// binding, a receipt) whose id is path value name, kind naming it in not_found.
func (o object[T, R]) part(name, kind string, op func(context.Context, actor.Actor, uuid.UUID, uuid.UUID) (T, error)) handlerFunc {
	return o.handler(func(r *http.Request, id uuid.UUID) (T, error) {
		part, err := pathID(r, name, kind)
		if err != nil {
			var zero T
			return zero, err
		}
		return op(r.Context(), actorOf(r), id, part)
	})
}

// changing is handler for a person's operation on o with a JSON body.
func changing[Req, T, R any](o object[T, R], change func(context.Context, actor.Actor, uuid.UUID, Req) (T, error)) handlerFunc {
	return o.handler(func(r *http.Request, id uuid.UUID) (T, error) {
		var req Req
		if err := decode(r, &req); err != nil {
			var zero T
			return zero, err
		}
		return change(r.Context(), actorOf(r), id, req)
	})
}
