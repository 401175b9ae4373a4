package db

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// groupCommit runs SQLite's write transactions on its single write
// connection and commits them in groups. SQLite writes one transaction at a
// time, and its commit (writing every changed page to the log) was the
// largest share of a payment's time on the writer. While transactions wait
// for the writer, each one still runs alone, in a savepoint of one SQLite
// transaction that several of them share: its failure rolls back only its
// own savepoint, and the last of the group commits for all of them. None
// returns before that commit, so a caller told "done" was committed, and a
// crash loses only work nobody was told about. Transactions see the
// uncommitted work of those before them in the group, as they would have
// seen it committed a moment later; should the commit fail, all of them fail.
type groupCommit struct {
	write *sql.DB
	// mu is held by the transaction running on the group's SQLite transaction.
	mu sync.Mutex
	// waiting counts the transactions queued for mu: while there are some,
	// the one holding mu leaves the group open for them.
	waiting atomic.Int32
	// open is the group taking members, nil between groups.
	open *group
}

// maxGroup bounds how many transactions one commit carries, and so how long
// the first of them waits for it.
const maxGroup = 32

// group is one SQLite transaction shared by its members.
type group struct {
	raw     *sql.Tx
	members int
	// broken is set when a member's savepoint could not be rolled back or
	// released: SQLite may have abandoned the whole transaction.
	broken error
	// done is closed once the group committed or rolled back; err says why
	// it did not commit.
	done chan struct{}
	err  error
}

// memberSavepoint encloses one member's work. Savepoints fn opens itself
// (Tx.Savepoint) nest inside it.
const memberSavepoint = "group_member"

// run runs fn as a member of the open group (beginning one if none is open)
// and returns once its work is committed or rolled back.
func (g *groupCommit) run(ctx context.Context, d *DB, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.waiting.Add(1)
	g.mu.Lock()
	g.waiting.Add(-1)
	if g.open == nil {
		// The group outlives the caller that begins it, so no caller's
		// cancellation may roll it back.
		raw, err := g.write.BeginTx(context.Background(), nil)
		if err != nil {
			g.mu.Unlock()
			return fmt.Errorf("database: begin: %w", err)
		}
		g.open = &group{raw: raw, done: make(chan struct{})}
	}
	grp := g.open
	grp.members++
	tx := &Tx{tx: grp.raw, db: d, now: d.clock.Now(), grouped: true}
	var (
		fnErr    error
		panicked any
		ok       bool
	)
	if fnErr = ctx.Err(); fnErr == nil { // a caller that gave up while queued does nothing
		panicked, ok, fnErr = grp.runMember(ctx, tx, fn)
	}

	if grp.broken == nil && g.waiting.Load() > 0 && grp.members < maxGroup {
		g.mu.Unlock() // the next member carries on; a later one commits
	} else {
		g.open = nil
		grp.finish()
		g.mu.Unlock()
	}
	if panicked != nil {
		panic(panicked)
	}
	if !ok {
		return fnErr // rolled back to its savepoint: nothing to wait for
	}
	<-grp.done
	if grp.err != nil {
		return grp.err
	}
	for _, f := range tx.afterCommit {
		f()
	}
	if len(tx.unprepared) > 0 {
		d.writeStmts.prepareAll(context.WithoutCancel(ctx), tx.unprepared)
	}
	return nil
}

// runMember runs fn inside the member savepoint. ok reports that its work
// stays in the group, to be committed; otherwise fnErr says why not, or
// panicked holds what fn panicked with.
func (grp *group) runMember(ctx context.Context, tx *Tx, fn func(tx *Tx) error) (panicked any, ok bool, fnErr error) {
	ctx = context.WithoutCancel(ctx)
	if _, err := grp.raw.ExecContext(ctx, "SAVEPOINT "+memberSavepoint); err != nil {
		grp.broken = err
		return nil, false, fmt.Errorf("database: begin: %w", err)
	}
	func() {
		defer func() { panicked = recover() }()
		if fnErr = fn(tx); fnErr == nil {
			fnErr = tx.beforeCommit(ctx)
		}
	}()
	if fnErr == nil && panicked == nil {
		if _, err := grp.raw.ExecContext(ctx, "RELEASE "+memberSavepoint); err != nil {
			grp.broken = err
			return nil, false, fmt.Errorf("database: commit: %w", err)
		}
		return nil, true, nil
	}
	_, err := grp.raw.ExecContext(ctx, "ROLLBACK TO "+memberSavepoint)
	if err == nil {
		_, err = grp.raw.ExecContext(ctx, "RELEASE "+memberSavepoint)
	}
	if err != nil {
		grp.broken = err
	}
	return panicked, false, fnErr
}

// finish commits the group, or rolls it back if a member broke it, and
// tells its members.
func (grp *group) finish() {
	if grp.broken != nil {
		_ = grp.raw.Rollback()
		grp.err = fmt.Errorf("database: transaction rolled back with its group: %w", grp.broken)
	} else if err := grp.raw.Commit(); err != nil {
		grp.err = fmt.Errorf("database: commit: %w", err)
	}
	close(grp.done)
}
