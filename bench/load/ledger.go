package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// ledgerFunding is what each account of the ledger scenario starts with,
// in minor units: enough that thousands of transfers of up to
// ledgerMaxAmount never empty one in a run.
const (
	ledgerFunding   = 1_000_000_000_000_000
	ledgerMaxAmount = 1 << 32
)

// ledgerTransfers measures the ledger core alone: no server, no HTTP, no
// sessions. It opens database itself through package db and migrates it as
// the server does, makes accounts organizations, each with an EUR
// available account funded by a deposit (an entry from the world account
// and its feed row), then has concurrency workers post transfers for
// duration. A transfer is what a payment's approval does to the book, in
// one transaction (db.Tx):
//
//   - the balance check: the payer's available balance is read
//     (ledger.AvailableBalance) and a transfer it does not cover is refused,
//     as a payment's funds are checked;
//   - ledger.Write of a two-posting entry (available of the payer to
//     available of the payee);
//   - the feed rows, through ledger.RecordAll with their day sums and events: a
//     fiat_outgoing row "out" for the payer (as a payment's) and a deposit
//     row "in" for the payee (as money arriving);
//   - Move of the entry's balances, last as a payment's approval does,
//     which refuses a customer balance below zero again under its row lock.
//
// The pattern is pgledger's performance_check (go/performance_check.go in
// github.com/pgr0ss/pgledger), so the two can be compared: every worker
// loops picking two different accounts at random among the same few
// (-accounts, 10 by default as there) and moves a random amount up to 2^32
// minor units (there rand.Uint32()) from the first to the second; with few
// accounts, workers contend for the same rows as they do there. pgledger's
// accounts may go negative and it keeps no feed, so this scenario does more
// per transfer than pgledger does (see bench/README.md).
//
// At the end it checks ledger.CheckInvariants over the whole database and
// fails when the book does not hold.
func ledgerTransfers(database string, concurrency int, duration time.Duration, accounts int) error {
	if accounts < 2 {
		return errors.New("-accounts must be at least 2")
	}
	ctx := context.Background()
	if database == "" {
		dir, err := os.MkdirTemp("", "strongroom-load")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		database = "sqlite:" + filepath.Join(dir, "load.db")
	}
	d, err := db.Open(ctx, database)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Migrate(ctx); err != nil {
		return err
	}
	orgs := make([]uuid.UUID, accounts)
	for i := range orgs {
		if orgs[i], err = ledgerFundedOrganization(ctx, d, i); err != nil {
			return err
		}
	}
	counter := startPGCounter(database)
	res := forDuration(concurrency, duration, func() error {
		perm := rand.Perm(len(orgs))
		return ledgerTransfer(ctx, d, orgs[perm[0]], orgs[perm[1]], 1+rand.Int64N(ledgerMaxAmount-1))
	})
	res.print(fmt.Sprintf("ledger transfers (balance check, entry, two feed rows) among %d accounts", accounts))
	counter.per(len(res.latencies))
	if err := ledger.CheckInvariants(ctx, d.Reader()); err != nil {
		return fmt.Errorf("the ledger's invariants do not hold after the run: %w", err)
	}
	fmt.Println("  ledger invariants hold")
	if res.errors > 0 {
		return fmt.Errorf("%d transfers failed, the first: %w", res.errors, res.firstErr)
	}
	return nil
}

// ledgerFundedOrganization makes an organization with ledgerFunding in its
// EUR available account, deposited as the sandbox deposits.
func ledgerFundedOrganization(ctx context.Context, d *db.DB, i int) (uuid.UUID, error) {
	return db.InTx(ctx, d, func(tx *db.Tx) (uuid.UUID, error) {
		org, err := organization.Create(ctx, tx, fmt.Sprintf("Ledger Load %d %s", i, uuid.NewString()[:8]), organization.EntityReady, false)
		if err != nil {
			return uuid.Nil, err
		}
		entry, err := ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &org.ID, Kind: "deposit", Description: "Load deposit",
			Postings: []ledger.Posting{
				{Account: ledger.PlatformAccount(org.ID, "EUR", ledger.World), Amount: -ledgerFunding},
				{Account: ledger.OrgAccount(org.ID, "EUR", ledger.Available), Amount: ledgerFunding},
			}})
		if err != nil {
			return uuid.Nil, err
		}
		_, err = ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: org.ID, Type: "deposit", EntryID: &entry, Direction: "in",
			Amount: ledgerFunding, Currency: "EUR", Description: "Deposit"})
		return org.ID, err
	})
}

// ledgerTransfer moves amount from the available EUR of one organization
// to another's, in one transaction.
func ledgerTransfer(ctx context.Context, d *db.DB, from, to uuid.UUID, amount int64) error {
	return d.Tx(ctx, func(tx *db.Tx) error {
		bal, err := ledger.AvailableBalance(ctx, tx, from, "EUR")
		if err != nil {
			return err
		}
		if bal < amount {
			return ledger.ErrInsufficientFunds
		}
		written, err := ledger.Write(ctx, tx, ledger.Entry{OrganizationID: &from, Kind: "payment", Description: "Load transfer",
			Postings: []ledger.Posting{
				{Account: ledger.OrgAccount(from, "EUR", ledger.Available), Amount: -amount},
				{Account: ledger.OrgAccount(to, "EUR", ledger.Available), Amount: amount},
			}})
		if err != nil {
			return err
		}
		entry := written.IDs[0]
		payment := uuid.Must(uuid.NewV7())
		if _, err := ledger.RecordAll(ctx, tx,
			ledger.Transaction{OrganizationID: from, Type: "fiat_outgoing", EntryID: &entry, Direction: "out",
				Amount: amount, Currency: "EUR", Description: "Load transfer", PaymentID: &payment},
			ledger.Transaction{OrganizationID: to, Type: "deposit", EntryID: &entry, Direction: "in",
				Amount: amount, Currency: "EUR", Description: "Load transfer"}); err != nil {
			return err
		}
		return written.Move(ctx, tx)
	})
}
