// Package actor names who acts on a request: a person through a session,
// or a program through an API key. Authentication produces an Actor; every
// service operation takes one and hands it to the one authorization policy
// (organization.Check). The package holds facts, no rules.
package actor

import (
	"slices"
	"time"

	"github.com/google/uuid"
)

// Actor is who acts: a person (UserID and Session set) or a program (Key
// set; UserID and Session empty).
type Actor struct {
	UserID  uuid.UUID
	Session Session
	Key     *Key
	// Name names who acts, as read with the credential: the person's name
	// (or email), the key's name. It describes (the audit log records it);
	// it never grants.
	Name string
}

// IsKey reports whether a program acts through an API key.
func (a Actor) IsKey() bool { return a.Key != nil }

// Session is a signed-in person's session on one device.
type Session struct {
	ID            uuid.UUID
	UserID        uuid.UUID
	DeviceID      uuid.UUID
	Platform      Platform
	InsertedAt    time.Time
	ExpiresAt     time.Time
	IdleExpiresAt time.Time
}

// Key is the API key a program acts through.
type Key struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	Lookup         string
	// Role is the key's role in its organization (admin or member).
	Role   string
	Scopes []string
	// OrganizationStatus is the organization's status read with the key
	// when it was authenticated, in the same statement, so the policy need
	// not read it again on this request.
	OrganizationStatus string
	// ReadsAsRole is set on the key an event is rendered for (the events
	// API, the realtime channel, a webhook's body): it reads the record the
	// event names as a person of Role would, whether or not the record's
	// own operation accepts keys, and writes nothing. The operation the
	// program called has checked its own scope.
	ReadsAsRole bool
}

// AsViewer returns a acting as the viewer of an event's record: a person
// unchanged, a key reading as a person of its role (Key.ReadsAsRole).
func (a Actor) AsViewer() Actor {
	if a.Key != nil {
		k := *a.Key
		k.ReadsAsRole = true
		a.Key = &k
	}
	return a
}

// OrganizationViewer is the viewer who sees an organization's events as its
// owners do, with no person behind it: what a webhook's body carries.
func OrganizationViewer(orgID uuid.UUID) Actor {
	return Actor{Key: &Key{OrganizationID: orgID, Role: "owner", ReadsAsRole: true}}
}

// HasScope reports whether the key holds scope.
func (k *Key) HasScope(scope string) bool { return slices.Contains(k.Scopes, scope) }

// Platform is the kind of client a device is. It describes; it never
// grants: what only the service's own apps may do is proven otherwise.
type Platform string

// Platforms. Device trust and approval credentials belong to the service's
// own mobile apps.
const (
	PlatformWeb     Platform = "web"
	PlatformIOS     Platform = "ios"
	PlatformAndroid Platform = "android"
	PlatformCLI     Platform = "cli"
)

// Platforms lists every platform, for validation.
var Platforms = []Platform{PlatformWeb, PlatformIOS, PlatformAndroid, PlatformCLI}

// IsApp reports whether p is one of the service's own mobile apps.
func (p Platform) IsApp() bool { return p == PlatformIOS || p == PlatformAndroid }
