package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/bill"
	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/invoicing"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/paymentrequest"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/event"
)

// realtimeWindow is how far back a reconnecting client's replay reaches.
const realtimeWindow = 24 * time.Hour

// realtimeWriteTimeout bounds one write to a realtime client: a client that
// takes no bytes for this long is gone.
const realtimeWriteTimeout = 15 * time.Second

// realtimeRenderer renders the data of one message type from its event's
// stored data: the record the event names as the actor may see it now (at
// delivery, not at the time of the event). A not_found or forbidden answer
// skips the message: the actor may not see that record.
type realtimeRenderer func(ctx context.Context, a actor.Actor, data json.RawMessage) (any, error)

// realtimeRenderers maps each message type of the realtime channel to its
// renderer; events of other types are not carried. A new type is one line
// here: byID for a record the event names by id, or a renderer of its own.
func (s *server) realtimeRenderers() map[string]realtimeRenderer {
	return map[string]realtimeRenderer{
		payment.PaymentUpdated:    byID("payment_id", s.Payments.GetPayment, newPaymentRecord),
		payment.ApprovalUpdated:   byID("approval_id", s.Payments.GetApproval, newApprovalRecord),
		card.Updated:              byID("card_id", s.Cards.Get, newCardRecord),
		bill.EventAppended:        s.renderBillEvent,
		invoicing.Updated:         byID("invoice_id", s.Invoices.GetByID, newInvoiceRecord),
		ledger.TransactionCreated: byIDIn("transaction_id", s.Ledger.FeedItem, newTransactionRecord),
		paymentrequest.Updated:    byID("payment_request_id", s.PaymentRequests.Find, newPaymentRequestRecord),
	}
}

// byID renders an event whose data names a record by id in field, with the
// record's GET: get reads it as the actor may see it, record renders it.
func byID[T, R any](field string, get func(context.Context, actor.Actor, uuid.UUID) (T, error), record func(T) R) realtimeRenderer {
	return func(ctx context.Context, a actor.Actor, data json.RawMessage) (any, error) {
		var ids map[string]string
		if err := json.Unmarshal(data, &ids); err != nil {
			return nil, fmt.Errorf("realtime: event data: %w", err)
		}
		id, err := uuid.Parse(ids[field])
		if err != nil {
			return nil, fmt.Errorf("realtime: event data %s: %w", field, err)
		}
		v, err := get(ctx, a, id)
		if err != nil {
			return nil, err
		}
		return record(v), nil
	}
}

// realtimeSink is the transport of one connection.
type realtimeSink interface {
	send(ctx context.Context, id uuid.UUID, msg []byte) error
	ping(ctx context.Context) error
	// end closes the connection, saying why when the transport can.
	end(reason error)
}

// realtime serves an organization's realtime channel: a WebSocket, or
// server-sent events when the client accepts text/event-stream, to any
// member's session or a key of the organization holding events:subscribe.
// A client naming the last message it received (Last-Event-ID, or ?after=)
// first gets what it missed from the last 24 hours.
func (s *server) realtime(w http.ResponseWriter, r *http.Request) error {
	org, err := organizationID.id(r)
	if err != nil {
		return err
	}
	after, field, err := lastEventID(r)
	if err != nil {
		return err
	}
	sse := acceptsEventStream(r)
	if !sse && !isWebSocketUpgrade(r) {
		return apierr.InvalidField("", "Open this channel as a WebSocket, or ask for server-sent events with Accept: text/event-stream.")
	}
	a := actorOf(r)
	if _, _, err := s.realtimeAccess(r.Context(), a, org); err != nil {
		return err
	}
	if s.Realtime == nil {
		return apierr.New(apierr.ServiceUnavailable, "The realtime channel is not running on this server.")
	}
	sub, err := s.Realtime.Subscribe(r.Context(), org, after)
	switch {
	case errors.Is(err, event.ErrClosed):
		return apierr.New(apierr.ServiceUnavailable, "The server is stopping; connect again.")
	case errors.Is(err, event.ErrUnknownEvent):
		return apierr.InvalidField(field, "must be the id of a message of this organization's channel.")
	case err != nil:
		return err
	}
	defer sub.Close()
	var sink realtimeSink
	ctx := r.Context()
	if sse {
		sink = newSSESink(w)
	} else {
		// The bearer travels in the Authorization header, never in a
		// cookie, so a page of another origin cannot open a connection
		// with the person's credentials: the origin check adds nothing.
		conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return nil // Accept has answered
		}
		// Reading in the background answers pings and notices the close;
		// the client has nothing to say on this channel.
		ctx = conn.CloseRead(ctx)
		sink = wsSink{conn}
	}
	reason := s.stream(ctx, a, sub, after != uuid.Nil, sink)
	sink.end(reason)
	if failed(reason) {
		s.logger.LogAttrs(ctx, slog.LevelError, "realtime stream failed", slog.String("request_id", infoOf(r).id),
			slog.String("organization_id", org.String()), slog.String("error", reason.Error()))
	}
	return nil
}

// errClientGone wraps a failed write: the client left or stopped reading.
var errClientGone = errors.New("realtime: client gone")

// failed reports whether a stream ended by a fault of the server's (a
// failed read or render) rather than by the client leaving, the tail
// ending the subscription, or the person losing access.
func failed(reason error) bool {
	_, isAPI := apierr.As(reason)
	return reason != nil && !isAPI && !errors.Is(reason, errClientGone) && !errors.Is(reason, event.ErrClosed) &&
		!errors.Is(reason, event.ErrTooSlow) && !errors.Is(reason, context.Canceled)
}

// stream sends the missed messages (when replay: the client named its
// last), then the live ones, until the client leaves, the tail ends the
// subscription, or the person may no longer see the organization; it
// returns why it ended.
func (s *server) stream(ctx context.Context, a actor.Actor, sub *event.Subscription, replay bool, sink realtimeSink) error {
	access, err := s.watchAccess(ctx, a, sub.Organization())
	if err != nil {
		return err
	}
	defer access.close()
	deliver := func(e event.Event) error {
		if !s.carries(e.Type) {
			return nil
		}
		// Nothing leaves after the session ends. A sign-out in this
		// process is notified as it commits, before any later event is
		// read; another instance's comes over the same listening
		// connection that wakes the tail, in commit order.
		if err := access.check(ctx); err != nil {
			return err
		}
		msg, ok, err := s.renderEvent(ctx, access.a, e)
		if err != nil {
			return err
		}
		if !ok {
			// Not for this viewer, or gone; or they lost the organization.
			return access.recheck(ctx)
		}
		body, err := json.Marshal(msg)
		if err != nil {
			return err
		}
		return sink.send(ctx, e.ID, body)
	}
	if replay {
		if err := sub.Replay(ctx, s.Clock.Now().Add(-realtimeWindow), deliver); err != nil {
			return err
		}
	}
	every := s.RealtimePing
	if every <= 0 {
		every = 25 * time.Second
	}
	ping := time.NewTicker(every)
	defer ping.Stop()
	// The clock is looked at every second, not slept on: the sandbox's
	// manual clock jumps, and the session's end must be seen within
	// seconds of it either way.
	clockCheck := time.NewTicker(realtimeClockCheck)
	defer clockCheck.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-sub.Done():
			return sub.Err()
		case <-access.sessions:
			err = access.recheck(ctx)
		case <-access.organizations:
			err = access.recheck(ctx)
		case <-clockCheck.C:
			err = access.check(ctx)
		case e := <-sub.Events():
			err = deliver(e)
		case <-ping.C:
			if err = access.recheck(ctx); err == nil {
				err = sink.ping(ctx)
			}
		}
		if err != nil {
			return err
		}
	}
}

// realtimeClockCheck is how often a stream compares the clock with the
// moment its session ends by time.
const realtimeClockCheck = time.Second

// realtimeAccess lets a through to org's channel while their session is
// live and they are a member of an organization that admits reads, or
// while their key is unrevoked, holds events:subscribe and its organization
// is active. It returns the actor as it stands now (a key's current role)
// and when the session ends by time unless renewed (a key: never).
func (s *server) realtimeAccess(ctx context.Context, a actor.Actor, org uuid.UUID) (actor.Actor, time.Time, error) {
	if a.IsKey() {
		k, err := s.APIKeys.Live(ctx, a.Key.ID)
		if err != nil {
			return a, time.Time{}, err
		}
		a = actor.Actor{Key: &k}
		_, err = organization.Check(ctx, s.DB.Reader(), a, org, organization.Need{Scope: scopeEventsSubscribe})
		return a, keyNeverExpires, err
	}
	until, err := s.Identity.SessionLiveUntil(ctx, a.Session.ID)
	if err != nil {
		return a, time.Time{}, err
	}
	_, err = organization.Check(ctx, s.DB.Reader(), a, org, organization.Need{})
	return a, until, err
}

// keyNeverExpires is when a key's stream ends by time: keys end only by a
// change (revocation, scopes, the organization's status), which notifies.
var keyNeverExpires = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// accessWatch keeps a stream's answer to "may this person (or key) still
// read the channel?" without a read per message. The database notifies the
// person's sessions topic when one of their sessions ends (sign-out), the
// API keys topic when a key changes (revocation, scopes) and the
// organization status topic when an organization's status changes, in
// every instance; the session's end by time (idle or absolute, on the
// injected clock) is known in advance. Access is read again on a
// notification, when that moment comes (a request of the session may have
// renewed it), and for every message while notifications may be missed.
type accessWatch struct {
	s *server
	// a is the viewer, as of the last check (a key's current role).
	a   actor.Actor
	org uuid.UUID
	// sessions and organizations receive the notifications.
	sessions, organizations <-chan struct{}
	stop                    []func()
	until                   time.Time
}

// watchAccess starts watching a's access to org and checks it once.
func (s *server) watchAccess(ctx context.Context, a actor.Actor, org uuid.UUID) (*accessWatch, error) {
	w := &accessWatch{s: s, a: a, org: org}
	var stop func()
	// Subscribed before the first check, so no end falls between the two.
	topic := identity.SessionsTopic(a.UserID)
	if a.IsKey() {
		topic = apikey.Topic
	}
	w.sessions, stop = s.DB.Subscribe(topic)
	w.stop = append(w.stop, stop)
	w.organizations, stop = s.DB.Subscribe(organization.StatusTopic)
	w.stop = append(w.stop, stop)
	if err := w.recheck(ctx); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *accessWatch) close() {
	for _, stop := range w.stop {
		stop()
	}
}

// check answers from what is known when nothing was notified, the session's
// end has not come and notifications reach this process; else it reads.
func (w *accessWatch) check(ctx context.Context) error {
	notified := false
	for _, ch := range []<-chan struct{}{w.sessions, w.organizations} {
		select {
		case <-ch:
			notified = true
		default:
		}
	}
	if !notified && w.s.DB.NotificationsLive() && w.s.Clock.Now().Before(w.until) {
		return nil
	}
	return w.recheck(ctx)
}

// recheck reads the session and the membership again.
func (w *accessWatch) recheck(ctx context.Context) error {
	a, until, err := w.s.realtimeAccess(ctx, w.a, w.org)
	if err != nil {
		return err
	}
	w.a, w.until = a, until
	return nil
}

// lastEventID reads where a reconnecting client left off: the Last-Event-ID
// header (sent by an EventSource that reconnects) or the after parameter;
// the header wins, being the newer. uuid.Nil when neither is given; field
// names where the id came from.
func lastEventID(r *http.Request) (id uuid.UUID, field string, err error) {
	v, field := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, field = r.URL.Query().Get("after"), "after"
	}
	if v == "" {
		return uuid.Nil, field, nil
	}
	id, err = uuid.Parse(v)
	if err != nil || len(v) != 36 {
		return uuid.Nil, field, apierr.InvalidField(field, "must be the id of a message of this organization's channel.")
	}
	return id, field, nil
}

func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if mt, _, err := mime.ParseMediaType(part); err == nil && mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}

func isWebSocketUpgrade(r *http.Request) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && headerHasToken(r.Header, "Upgrade", "websocket")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

// sseSink writes server-sent events. Each write gets its own deadline, so
// the server's write timeout does not cut a long-lived stream, and the read
// deadline is lifted: the client sends nothing after the request.
type sseSink struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newSSESink(w http.ResponseWriter) *sseSink {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	w.WriteHeader(http.StatusOK)
	s := &sseSink{w: w, rc: rc}
	_ = s.write(": connected\n\n")
	return s
}

func (s *sseSink) write(text string) error {
	err := s.rc.SetWriteDeadline(time.Now().Add(realtimeWriteTimeout))
	if err == nil {
		_, err = s.w.Write([]byte(text))
	}
	if err == nil {
		err = s.rc.Flush()
	}
	if err != nil {
		return fmt.Errorf("%w: %w", errClientGone, err)
	}
	return nil
}

func (s *sseSink) send(_ context.Context, id uuid.UUID, msg []byte) error {
	return s.write("id: " + id.String() + "\ndata: " + string(msg) + "\n\n")
}

func (s *sseSink) ping(context.Context) error { return s.write(": keep-alive\n\n") }

// end leaves the response: the client reconnects with Last-Event-ID.
func (s *sseSink) end(error) {}

// wsSink writes WebSocket text messages.
type wsSink struct{ conn *websocket.Conn }

func (s wsSink) send(ctx context.Context, _ uuid.UUID, msg []byte) error {
	return s.within(ctx, func(ctx context.Context) error { return s.conn.Write(ctx, websocket.MessageText, msg) })
}

// ping waits for the pong as well: a client that does not answer is gone.
func (s wsSink) ping(ctx context.Context) error { return s.within(ctx, s.conn.Ping) }

func (s wsSink) within(ctx context.Context, op func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, realtimeWriteTimeout)
	defer cancel()
	if err := op(ctx); err != nil {
		return fmt.Errorf("%w: %w", errClientGone, err)
	}
	return nil
}

// end closes the connection with a status that tells the client whether to
// reconnect: going away (server stopping), try again later (it fell behind),
// policy violation (the session ended or access was lost).
func (s wsSink) end(reason error) {
	code, text := websocket.StatusNormalClosure, ""
	switch {
	case errors.Is(reason, errClientGone):
		_ = s.conn.CloseNow()
		return
	case errors.Is(reason, event.ErrClosed):
		code, text = websocket.StatusGoingAway, "server stopping"
	case errors.Is(reason, event.ErrTooSlow):
		code, text = websocket.StatusTryAgainLater, "fell behind; reconnect with after"
	case apierr.Is(reason, apierr.NotAuthenticated):
		code, text = websocket.StatusPolicyViolation, "session ended"
	case apierr.Is(reason, apierr.InvalidAPIKey), apierr.Is(reason, apierr.APIScopeMissing):
		code, text = websocket.StatusPolicyViolation, "api key revoked or changed"
	case apierr.Is(reason, apierr.NotFound), apierr.Is(reason, apierr.OrganizationUnavailable):
		code, text = websocket.StatusPolicyViolation, "organization not available"
	case reason != nil && !errors.Is(reason, context.Canceled):
		code, text = websocket.StatusInternalError, "internal error"
	}
	_ = s.conn.Close(code, text)
}
