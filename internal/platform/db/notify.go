package db

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// notifyChannel is the one PostgreSQL channel all topics travel on; the
// payload names the topic.
const notifyChannel = "strongroom"

// hub fans committed notifications out to this process's subscribers and,
// on PostgreSQL, listens for those of other instances.
type hub struct {
	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	listen func(ctx context.Context) // nil on SQLite: one process owns the file
	start  sync.Once
	stop   context.CancelFunc
	done   chan struct{}
}

func newHub() *hub {
	return &hub{subs: map[string]map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives a value after a transaction
// that called Notify(topic) commits (several commits may fold into one
// wake-up), and a function that ends the subscription.
func (d *DB) Subscribe(topic string) (<-chan struct{}, func()) {
	h := d.hub
	if h.listen != nil {
		h.start.Do(func() {
			ctx, cancel := context.WithCancel(context.Background())
			h.stop, h.done = cancel, make(chan struct{})
			go func() { defer close(h.done); h.listen(ctx) }()
		})
	}
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
		h.mu.Unlock()
	}
}

func (h *hub) publish(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[topic] {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is already waiting
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
// down are covered by the subscribers' polling.
func listenPostgres(dsn string, h *hub) func(ctx context.Context) {
	return func(ctx context.Context) {
		for ctx.Err() == nil {
			err := listenOnce(ctx, dsn, h)
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
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		h.publish(n.Payload)
	}
}
