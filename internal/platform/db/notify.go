package db

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// notifyChannel is the PostgreSQL channel all topics travel on (the payload
// names the topic): one per schema, so deployments (and tests) sharing a
// database in schemas of their own do not hear each other.
func notifyChannel(schema string) string { return "strongroom." + schema }

// hub fans committed notifications out to this process's subscribers and,
// on PostgreSQL, listens for those of other instances.
type hub struct {
	mu       sync.Mutex
	subs     map[string]map[chan struct{}]struct{}
	watchers map[string]map[*func()]struct{}
	listen   func(ctx context.Context) // nil on SQLite: one process owns the file
	channel  string                    // PostgreSQL's notification channel
	// live: every commit's notifications reach this process. Always on
	// SQLite; on PostgreSQL only while the listening connection is up.
	live  atomic.Bool
	start sync.Once
	stop  context.CancelFunc
	done  chan struct{}
}

func newHub(listening bool) *hub {
	h := &hub{subs: map[string]map[chan struct{}]struct{}{}, watchers: map[string]map[*func()]struct{}{}}
	h.live.Store(!listening)
	return h
}

// ensureListening starts, on PostgreSQL, the connection that listens for the
// notifications of other instances, once someone wants them.
func (h *hub) ensureListening() {
	if h.listen == nil {
		return
	}
	h.start.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		h.mu.Lock()
		h.stop, h.done = cancel, make(chan struct{})
		h.mu.Unlock()
		go func() { defer close(h.done); h.listen(ctx) }()
	})
}

// Subscribe returns a channel that receives a value after a transaction
// that called Notify(topic) commits (several commits may fold into one
// wake-up), and a function that ends the subscription.
func (d *DB) Subscribe(topic string) (<-chan struct{}, func()) {
	h := d.hub
	h.ensureListening()
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[topic] == nil {
		h.subs[topic] = map[chan struct{}]struct{}{}
	}
	h.subs[topic][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[topic], ch)
		if len(h.subs[topic]) == 0 {
			delete(h.subs, topic) // topics may be per person: keep none that nobody hears
		}
		h.mu.Unlock()
	}
}

// Watch calls fn after every commit of a transaction that called
// Notify(topic): in this process before the transaction's caller goes on,
// from other instances as soon as their notification arrives. It also calls
// fn whenever notifications may have been missed (the listening connection
// of PostgreSQL lost or regained), so a cache that fn empties never holds
// what a missed notification should have removed. fn must be quick and must
// not start a transaction. The returned function ends the watch.
func (d *DB) Watch(topic string, fn func()) func() {
	h := d.hub
	h.ensureListening()
	key := &fn
	h.mu.Lock()
	if h.watchers[topic] == nil {
		h.watchers[topic] = map[*func()]struct{}{}
	}
	h.watchers[topic][key] = struct{}{}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.watchers[topic], key)
		h.mu.Unlock()
	}
}

// NotificationsLive reports whether every committed notification reaches
// this process now: what a cache emptied by Watch needs before it may keep
// anything. False on PostgreSQL while the listening connection is down.
func (d *DB) NotificationsLive() bool { return d.hub.live.Load() }

func (h *hub) publish(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for fn := range h.watchers[topic] {
		(*fn)()
	}
	for ch := range h.subs[topic] {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is already waiting
		}
	}
}

// setLive records whether notifications reach this process and, since some
// may have been missed around the change, calls every watcher. (Subscribers
// poll for what they miss.)
func (h *hub) setLive(live bool) {
	h.live.Store(live)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, fns := range h.watchers {
		for fn := range fns {
			(*fn)()
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	stop, done := h.stop, h.done
	h.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// listenPostgres keeps a connection of its own LISTENing and publishes what
// arrives, reconnecting after a failure. Notifications lost while it is
// down are covered by the subscribers' polling and by NotificationsLive.
func listenPostgres(dsn string, h *hub) func(ctx context.Context) {
	return func(ctx context.Context) {
		for ctx.Err() == nil {
			err := listenOnce(ctx, dsn, h)
			if h.live.Load() {
				h.setLive(false)
			}
			if ctx.Err() != nil {
				return
			}
			_ = err // the subscribers poll meanwhile
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func listenOnce(ctx context.Context, dsn string, h *hub) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{h.channel}.Sanitize()); err != nil {
		return err
	}
	h.setLive(true)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		h.publish(n.Payload)
	}
}
