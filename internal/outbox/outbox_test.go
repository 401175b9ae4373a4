package outbox_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/outbox"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/page"
)

type recordingSender struct {
	mu   sync.Mutex
	sent []outbox.Message
	fail int // fail this many sends first
}

func (r *recordingSender) Send(_ context.Context, m outbox.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		return io.ErrUnexpectedEOF
	}
	r.sent = append(r.sent, m)
	return nil
}

func TestQueuedMessagesAreDeliveredOnceAndOnlyIfCommitted(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		clk := clock.NewManual(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
		code := "123456"
		queue := func(tx *db.Tx, subject string) error {
			_, err := outbox.Queue(ctx, tx, clk.Now(), outbox.Message{Kind: outbox.Notification, Channel: outbox.ChannelEmail, Subject: subject, Body: "b", Code: &code})
			return err
		}
		if err := d.Tx(ctx, func(tx *db.Tx) error { return queue(tx, "kept") }); err != nil {
			t.Fatal(err)
		}
		_ = d.Tx(ctx, func(tx *db.Tx) error {
			if err := queue(tx, "rolled back"); err != nil {
				return err
			}
			return io.EOF
		})
		sender := &recordingSender{fail: 1}
		runner := job.NewRunner(d, clk, slog.New(slog.NewTextHandler(io.Discard, nil)))
		(&outbox.Delivery{DB: d, Clock: clk, Sender: sender}).Register(runner)
		if _, err := runner.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if len(sender.sent) != 0 {
			t.Fatal("the failed send counted as delivered")
		}
		clk.Advance(time.Hour) // past the retry backoff
		if _, err := runner.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour)
		if _, err := runner.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if len(sender.sent) != 1 || sender.sent[0].Subject != "kept" || *sender.sent[0].Code != code {
			t.Fatalf("sent = %+v, want the committed message once", sender.sent)
		}
		msgs, err := outbox.List(ctx, d.Reader(), outbox.Filter{}, page.Request{Limit: 10})
		if err != nil || len(msgs) != 1 {
			t.Fatalf("List = %d messages, %v", len(msgs), err)
		}
	})
}
