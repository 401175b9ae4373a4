package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/outbox"
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

// eachEngine runs test on every engine with a database whose transactions
// read clk, so jobs queued in them are due on clk.
func eachEngine(t *testing.T, clk clock.Clock, test func(t *testing.T, d *db.DB)) {
	t.Helper()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) { test(t, dbtest.Open(t, e.Migrated(t), db.WithClock(clk))) })
	}
}

func testKeys(t *testing.T) *keyring.Keyring {
	k, err := keyring.New([]byte(strings.Repeat("o", 32)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestQueuedMessagesAreDeliveredOnceAndOnlyIfCommitted(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	eachEngine(t, clk, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		code := "123456"
		sender := &recordingSender{fail: 1}
		ob := &outbox.Outbox{DB: d, Keys: testKeys(t), Sender: sender}
		queue := func(tx *db.Tx, subject string) error {
			_, err := ob.Queue(ctx, tx, outbox.Message{Kind: outbox.StepUpEmailCode, Channel: outbox.ChannelEmail, Subject: subject, Body: "Your code is " + code + ".", Code: &code})
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
		runner := job.NewRunner(d, clk, slog.New(slog.NewTextHandler(io.Discard, nil)))
		ob.Register(runner)
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
		// The sender gets the real code and body, opened from the sealed copy.
		if len(sender.sent) != 1 || sender.sent[0].Subject != "kept" || sender.sent[0].Code == nil || *sender.sent[0].Code != code ||
			sender.sent[0].Body != "Your code is 123456." {
			t.Fatalf("sent = %+v, want the committed message once, with its code", sender.sent)
		}
		msgs, err := ob.List(ctx, d.Reader(), outbox.Filter{}, page.Request{Limit: 10})
		if err != nil || len(msgs) != 1 || msgs[0].Code == nil || *msgs[0].Code != code || msgs[0].Body != "Your code is 123456." {
			t.Fatalf("List = %+v, %v: want the message with its code opened", msgs, err)
		}
		stored, err := outbox.List(ctx, d.Reader(), outbox.Filter{}, page.Request{Limit: 10})
		if err != nil || len(stored) != 1 || stored[0].Code != nil || stored[0].Body != "Your code is "+outbox.CodePlaceholder+"." {
			t.Fatalf("stored = %+v, %v: want no code and the placeholder in the body", stored, err)
		}
		assertNoCodeAtRest(t, d, code)
	})
}

// assertNoCodeAtRest reads every column of every outbox row and job as text.
func assertNoCodeAtRest(t *testing.T, d *db.DB, code string) {
	t.Helper()
	for _, table := range []string{"outbox_messages", "jobs"} {
		rows, err := d.Reader().QueryContext(context.Background(), "SELECT * FROM "+table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				if strings.Contains(fmt.Sprint(v), code) {
					t.Errorf("%s.%s holds the code in plaintext: %v", table, cols[i], v)
				}
			}
		}
		rows.Close()
	}
}

func TestQueueRefusesCodesOutsideTheOutbox(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		code := "654321"
		err := d.Tx(ctx, func(tx *db.Tx) error {
			_, err := outbox.Queue(ctx, tx, outbox.Message{Kind: outbox.StepUpEmailCode, Channel: outbox.ChannelEmail, Subject: "s", Body: code, Code: &code})
			return err
		})
		if !errors.Is(err, outbox.ErrCodeNeedsOutbox) {
			t.Fatalf("Queue with a code: %v, want ErrCodeNeedsOutbox", err)
		}
	})
}

func TestLiveCodesReachTheSenderAfterCommitAndAreNeverStored(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	eachEngine(t, clk, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		sender := &recordingSender{}
		ob := &outbox.Outbox{DB: d, Live: true, Sender: sender}
		code := "246810"
		var queued outbox.Message
		if err := d.Tx(ctx, func(tx *db.Tx) error {
			var err error
			queued, err = ob.Queue(ctx, tx, outbox.Message{Kind: outbox.TOTPActivationCode, Channel: outbox.ChannelMessaging, Subject: "s", Body: "Code " + code + ", again " + code, Code: &code})
			if err == nil && len(sender.sent) != 0 {
				t.Error("sent before the commit")
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		_ = d.Tx(ctx, func(tx *db.Tx) error {
			other := "999999"
			if _, err := ob.Queue(ctx, tx, outbox.Message{Kind: outbox.TOTPActivationCode, Channel: outbox.ChannelMessaging, Subject: "s", Body: "x", Code: &other}); err != nil {
				return err
			}
			return io.EOF
		})
		if len(sender.sent) != 1 || sender.sent[0].ID != queued.ID || *sender.sent[0].Code != code || sender.sent[0].Body != "Code "+code+", again "+code {
			t.Fatalf("sent = %+v, want the committed message with its code, once", sender.sent)
		}
		// Nothing left for the job runner: the message was delivered in-process.
		runner := job.NewRunner(d, clk, slog.New(slog.NewTextHandler(io.Discard, nil)))
		ob.Register(runner)
		clk.Advance(time.Hour)
		if _, err := runner.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if len(sender.sent) != 1 {
			t.Fatalf("sent %d times, want once", len(sender.sent))
		}
		msgs, err := ob.List(ctx, d.Reader(), outbox.Filter{}, page.Request{Limit: 10})
		if err != nil || len(msgs) != 1 || msgs[0].Code != nil || strings.Contains(msgs[0].Body, code) {
			t.Fatalf("stored = %+v, %v: want one message without its code", msgs, err)
		}
		var delivered *time.Time
		if err := d.Reader().QueryRowContext(ctx, `SELECT delivered_at FROM outbox_messages WHERE id = $1`, queued.ID).Scan(&delivered); err != nil || delivered == nil {
			t.Fatalf("delivered_at = %v, %v: want it set", delivered, err)
		}
		assertNoCodeAtRest(t, d, code)
	})
}
