package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strongroom/strongroom/client/api"
)

// cmdStatements writes the organization's statement of one currency over a
// range of days, to a file (-O) or to stdout. A file is written beside its
// final name and renamed into place only once the whole statement arrived,
// so a statement cut off on the way never stands as a complete one.
func cmdStatements(e *env, args []string) error {
	fs := e.flags("statements", "statements --currency EUR --from YYYY-MM-DD --to YYYY-MM-DD [--format json|csv|camt053|ofx] [-O FILE] [--org ORG]")
	e.output = "table"
	fs.StringVar(&e.org, "org", "", "the organization, by `id or name` (default: your only one)")
	currency := fs.String("currency", "", "the `currency` (EUR, USD, …) or stablecoin (USDC, …)")
	from := fs.String("from", "", "the first `day` (YYYY-MM-DD, UTC)")
	to := fs.String("to", "", "the last `day` (YYYY-MM-DD, UTC), included; at most 366 days in all")
	format := fs.String("format", "json", "the `format`: json, csv, camt053 (ISO 20022) or ofx")
	outFile := fs.String("O", "", "write the statement to `FILE` instead of stdout")
	org, err := e.parseForOrg(fs, args)
	if err != nil {
		return err
	}
	if *currency == "" || *from == "" || *to == "" {
		return usageHelpf("statements needs --currency, --from and --to")
	}
	f := api.GetStatementParamsFormat(*format)
	if !f.Valid() {
		return usagef("--format must be json, csv, camt053 or ofx, not %q", *format)
	}
	fromDay, err := parseDate("from", *from)
	if err != nil {
		return err
	}
	toDay, err := parseDate("to", *to)
	if err != nil {
		return err
	}
	params := &api.GetStatementParams{Currency: strings.ToUpper(*currency), From: *fromDay, To: *toDay, Format: &f}
	if *outFile == "" {
		_, err := e.c.Statement(e.ctx, org, params, e.out)
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(*outFile), "."+filepath.Base(*outFile)+".*.part")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	n, err := e.c.Statement(e.ctx, org, params, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *outFile); err != nil {
		return err
	}
	fmt.Fprintf(e.errw, "wrote %s (%d bytes)\n", *outFile, n)
	return nil
}
