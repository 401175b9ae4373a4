package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// What every handler reads from a request besides its body (json.go): the
// bearer, the actor authentication found, ids in the path; and the
// organization a request acts on, noted for the access log.

type actorKey struct{}

// actorOf returns the person a session-authenticated request acts as.
func actorOf(r *http.Request) actor.Actor {
	a, _ := r.Context().Value(actorKey{}).(actor.Actor)
	return a
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return "", false
	}
	t := strings.TrimSpace(h[7:])
	return t, t != ""
}

// pathID parses a UUID path parameter; a malformed one is simply not found.
func pathID(r *http.Request, name, kind string) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue(name))
	if err != nil {
		return uuid.Nil, apierr.NotFoundf(kind)
	}
	return id, nil
}

// setOrganization records the organization a request acts on, for the access log.
func setOrganization(r *http.Request, id string) { infoOf(r).orgID = id }

// noteOrganization is setOrganization for an operation that has only the
// request's context: one whose body names the organization.
func noteOrganization(ctx context.Context, id string) {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		info.orgID = id
	}
}
